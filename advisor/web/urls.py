from __future__ import annotations

from django.urls import path

from advisor.web import account, fleet, history, views, wizard

urlpatterns = [
    path("", wizard.wizard, name="home"),
    path("wizard/check/", wizard.wizard_check, name="wizard-check"),
    path("recommendations/<id:pk>/", views.recommendation, name="recommendation"),
    path("recommendations/<id:pk>/calibrate/", views.calibrate, name="calibrate"),
    path("calibrations/<id:pk>/", views.calibration, name="calibration"),
    path("calibrations/<id:pk>/cancel/", views.cancel, name="cancel"),
    path("calibrations/<id:pk>/again/", views.measure_again, name="measure-again"),
    path("rules/", views.rules, name="rules"),
    path("compare/", history.compare, name="compare"),
    path("account/token/", account.token, name="token"),
    path("account/token/regenerate/", account.regenerate_token, name="token-regenerate"),
    path("account/notifications/", account.notifications, name="notifications"),
    path("fleet/", fleet.fleet_page, name="fleet"),
    path("fleet/<str:pk>/drain/", fleet.drain, name="fleet-drain"),
    # the history page's tabs (its third, the probes', is the probe app's: advisor/probe/urls.py)
    path("history/", history.history, name="history"),
    path("history/calibrations/", history.history, {"tab": "calibrations"}, name="calibration-history"),
]
