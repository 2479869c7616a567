"""One settings module, read from the environment.

Defaults need no server (SQLite and a file-system broker under var/), so `make run` works on a bare laptop;
DATABASE_URL and CELERY_BROKER_URL point the same code at PostgreSQL and Redis (or RabbitMQ)."""

from __future__ import annotations

from pathlib import Path

import dj_database_url

from advisor.env import env_bool, env_float, env_int, env_list, env_secret, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("ADVISOR_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])

# --- Production by default outside local use ---------------------------------------------------------------
# A host name other than this machine's means the site is reachable by others: unless DEBUG is on, the HTTPS
# settings are then on and the secret key must be a real one (each can still be set on its own).
LOCAL_HOSTS = {"127.0.0.1", "localhost", "testserver", "::1", "[::1]", "0.0.0.0"}
PUBLIC_HOSTS = [host for host in ALLOWED_HOSTS if host.lstrip(".") not in LOCAL_HOSTS]
PRODUCTION = env_bool("PRODUCTION", not DEBUG and bool(PUBLIC_HOSTS))
SECRET_KEY = env_secret(
    "SECRET_KEY", "dev-only-insecure-key-set-SECRET_KEY-in-production", required=PRODUCTION
)
HTTPS = env_bool("HTTPS", PRODUCTION)  # served to browsers over TLS (by a proxy in front, see README)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", HTTPS)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS)
# TLS ends at the proxy, which says so in X-Forwarded-Proto; trusted only where a proxy sets (and overwrites)
# it, or a client could claim HTTPS over plain HTTP.
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("TRUST_X_FORWARDED_PROTO", HTTPS) else None
)
CSRF_TRUSTED_ORIGINS = env_list(
    "CSRF_TRUSTED_ORIGINS", [f"https://{host.lstrip('.')}" for host in PUBLIC_HOSTS] if HTTPS else []
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "advisor",
    "advisor.probe",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Outermost but for the security headers: a database outage anywhere below is a 503 with its reason.
    "advisor.unavailable.DatabaseUnavailableMiddleware",
    # Serves static/ (htmx, CSS, the API docs' Swagger UI) from runserver and gunicorn alike.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # last, as django-axes asks: a locked-out sign-in is answered with its page (429)
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "advisor.urls"
WSGI_APPLICATION = "advisor.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Connections are kept between requests (seconds; 0 opens one per request). Opening one costs more than a
# whole POST /recommendations/: on SQLite, 0 halves the API's throughput
# (bench/results/api_amd-epyc-2c/README.md).
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'advisor.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        # A kept connection is checked before reuse: after a database restart the first request reconnects.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # How long opening a connection may take (seconds) before it fails. psycopg's own default is 130 s: a
    # database host that stops answering (its packets dropped, not refused) held a page for that long before
    # the 503, and a worker's heartbeat, whose device then looked offline to everyone; failing sooner lets
    # the next request or beat try a new connection.
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env_int(
        "DATABASE_CONNECT_TIMEOUT", 10, minimum=2
    )
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The web server and the worker write to the same file: wait for the lock instead of failing at once.
    # WAL lets readers (pages, polls) proceed while the worker writes; IMMEDIATE takes the write lock at
    # the start of a transaction, so two writers queue on the timeout instead of failing ("database is
    # locked").
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # A file, not memory, so that the worker processes an integration test starts see the test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# --- Sign-in that resists guessing (django-axes) -----------------------------------------------------------
# Failed sign-ins (the login page and the admin's alike; API tokens never pass through here) are counted per
# account AND address together: after AXES_FAILURE_LIMIT failures that pair is locked for the cool-off, with
# a message saying so; an administrator unlocks at once (admin: Axes > Access attempts, delete; or
# `manage.py axes_reset_username NAME`). Not by address alone: everyone behind the guesser's proxy or NAT
# would be locked out. Not by account alone: anyone could then lock any user out by guessing wrong on
# purpose, a denial of service on a shared box; the account's owner signs in from their own address. The
# address is the client's as our proxy forwarded it (advisor.accounts.client_address, FORWARDED_PROXIES).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = env_float("AXES_COOLOFF_HOURS", 0.25, minimum=0.001)  # hours
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "advisor.web.auth.locked_out"  # registration/locked_out.html, 429
AXES_CLIENT_IP_CALLABLE = "advisor.accounts.client_address"
AXES_VERBOSE = False
# Proxies in front of gunicorn that append the client's address to X-Forwarded-For (docker/README.md): the
# address to count is the one the outermost of them appended; 0 reads the connection's own address.
FORWARDED_PROXIES = env_int("FORWARDED_PROXIES", 1 if HTTPS else 0, minimum=0)

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Without a collectstatic run (make run, tests) files are found where they live; docker/ collects them.
WHITENOISE_USE_FINDERS = env_bool("WHITENOISE_USE_FINDERS", True)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "advisor.api.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON only: the contract is JSON, and a form-encoded TaskSpec would reach the engine as strings.
    "DEFAULT_PARSER_CLASSES": ["advisor.api.policies.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["advisor.api.policies.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "advisor.api.policies.Pagination",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 20, minimum=1),
    "EXCEPTION_HANDLER": "advisor.api.policies.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Network-selection advisor API",
    "DESCRIPTION": (
        "Describe a learning task, get a recommended network with cited reasons, then measure it on a "
        "worker's device. Authenticate with `Authorization: Token <key>` (`manage.py drf_create_token "
        "<user>`) or a session. Errors: 400 `{dotted.path: [messages]}`, 404 for what is not yours, 409 for "
        "cancelling a finished job, 429 when calibrations come too fast, 503 when the broker is unreachable "
        "(the job is kept and sent when it is back).\n\n"
        "[Back to the app](/) · [Your API token](/account/token/)"
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # a job's status and a measured configuration's share the field name: each enum named for what it is
    "ENUM_NAME_OVERRIDES": {"JobStatusEnum": "advisor.models.DeviceJob.STATUS_CHOICES"},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "advisor.api.schema.add_common_errors",
    ],
}

# --- Celery ------------------------------------------------------------------------------------------------
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("queue", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # The default 1 s poll would add up to a second to every job's pick-up.
        "polling_interval": env_float("BROKER_POLL_SECONDS", 0.05, minimum=0.001),
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {}
CELERY_BROKER_CONNECTION_TIMEOUT = env_float("BROKER_CONNECT_TIMEOUT", 2.0, minimum=0.1)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# A job's own limit (the user's request, capped by CALIBRATION_MAX_SECONDS) is enforced by the runner, which
# kills the measuring child; these task limits are the backstop for the task itself.
CALIBRATION_MAX_SECONDS = env_int("CALIBRATION_MAX_SECONDS", 600, minimum=1)
CALIBRATION_DEFAULT_SECONDS = env_int("CALIBRATION_DEFAULT_SECONDS", 120, minimum=1)
# The address this worker's peers reach it at, where it hosts a spread calibration's rendezvous (spread.py).
DISTRIBUTED_ADDRESS = env_str("DISTRIBUTED_ADDRESS", "127.0.0.1")
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", CALIBRATION_MAX_SECONDS + 60, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", CALIBRATION_MAX_SECONDS + 120, minimum=1)
# Timed seconds per configuration unless a job asks for more: half a second keeps a default sweep of a small
# task well under 30 s, and the IQR flags a configuration whose samples were too few to trust.
CALIBRATION_MIN_SECONDS = env_float("CALIBRATION_MIN_SECONDS", 0.5, minimum=0.01)
CALIBRATION_MAX_PARAMETERS = env_int("CALIBRATION_MAX_PARAMETERS", 200_000_000, minimum=1)
CALIBRATION_MAX_ATTEMPTS = env_int("CALIBRATION_MAX_ATTEMPTS", 2, minimum=1)
# Queued jobs (calibrations and probes together) one user may have waiting at once; more are refused (400).
# A device serves users in turn (least-recent use, advisor/queueing.py), so this bounds a user's backlog.
JOBS_QUEUED_PER_USER = env_int("JOBS_QUEUED_PER_USER", 20, minimum=1)

# A finished or failed job tells its owner (advisor/notify.py): a webhook POST waits at most this long, in a
# thread of its own; email goes through Django's backend (EMAIL_* settings; the console backend by default).
NOTIFY_TIMEOUT_SECONDS = env_float("NOTIFY_TIMEOUT_SECONDS", 5.0, minimum=0.1)
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "advisor@localhost")

# Workers refresh their devices' heartbeat this often; a device unseen for 3 periods is shown offline.
WORKER_HEARTBEAT_SECONDS = env_float("WORKER_HEARTBEAT_SECONDS", 5.0, minimum=0.1)
# A worker profiles its device for the time model before taking jobs, when it has no current profile
# (15-17 s on a quiet 2-core CPU, longer under load); 0 leaves estimates on the catalog path until
# `manage.py profile_device`.
WORKER_PROFILE_DEVICES = env_bool("WORKER_PROFILE_DEVICES", True)
# ... and profiles it again while idle, this long after its latest profile (a quarter of it after one taken
# under contention, which is not trusted, and until it has three trusted ones), keeping the median of its
# latest trusted profiles (advisor/profiles.py record_profile); 0: profiled once only
WORKER_REPROFILE_SECONDS = env_float("WORKER_REPROFILE_SECONDS", 3600.0, minimum=0.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# --- API (advisor/api) -------------------------------------------------------------------------------------
# Calibration submissions per user ("N/second|minute|hour|day"), read at each request so tests can change it.
CALIBRATION_THROTTLE_RATE = env_str("CALIBRATION_THROTTLE_RATE", "30/minute")
# The throttle's counters live in a cache every web process shares (a per-process memory cache would let each
# gunicorn worker grant the full rate); a file cache needs no server.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "throttle": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(VAR_DIR / "throttle"),
        "OPTIONS": {"MAX_ENTRIES": 100_000},  # one entry per user; culling would forget recent submissions
    },
}
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # Without these redis-py waits on a silent host for the OS's TCP timeout (minutes): a submission would
    # hang instead of answering 503 while the job waits in the outbox.
    CELERY_BROKER_TRANSPORT_OPTIONS.setdefault("socket_connect_timeout", CELERY_BROKER_CONNECTION_TIMEOUT)
    CELERY_BROKER_TRANSPORT_OPTIONS.setdefault("socket_timeout", env_float("BROKER_SOCKET_TIMEOUT", 10.0))
