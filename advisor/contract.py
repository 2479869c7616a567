"""The core data of the public contract as types (docs/CONTRACT.md, docs/CANDIDATE.md): the TaskSpec, the
recommendation with its candidates and their estimates, one measured configuration and a probe's verdict. Pure
declarations: no Django, no torch, so the engine, the calibration, the probe and the Django side all name the
same shapes.

The JSON stays plain dicts (stored in JSONFields, sent as is); these TypedDicts say what a dict holds where it
crosses a boundary. Fields marked NotRequired appear only in some cases, as the contract says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

if TYPE_CHECKING:
    from typing_extensions import ReadOnly  # typing's own from Python 3.13


class TaskData(TypedDict):
    examples: int
    input_shape: list[int]
    vocab_size: int | None
    outputs: int | None
    labelled_fraction: float
    bytes_per_value: int


class TaskHardware(TypedDict):
    cpu_cores: int
    cpu_threads: int
    ram_gb: float
    gpu: str | None  # a catalog id
    gpus_per_node: int
    gpu_memory_gb: float | None
    nodes: int
    link: str
    storage: str


class TaskTarget(TypedDict):
    accuracy: float | None
    two_sample: float | None  # generation only
    time_budget_hours: float | None


class TaskSpec(TypedDict):
    """A TaskSpec as advisor.engine.normalise returns it: validated, every default filled in."""

    task: str
    generation: str | None
    goal: str | None
    data: TaskData
    hardware: TaskHardware
    target: TaskTarget


class LayerArgs(TypedDict, total=False):
    """A layer's `args` (docs/CANDIDATE.md, "A layer"): a torch.nn kind's constructor keywords, an advisor's
    kind its own. Every key a kind takes is declared here, none required: which ones a kind needs, its shape
    rule (advisor/engine/layers.py) checks. Sizes are a number or a list, as JSON carries them."""

    # Linear
    in_features: int
    out_features: int
    bias: bool
    # Conv2d, ConvTranspose2d, CausalConv1d, pooling
    in_channels: int
    out_channels: int
    kernel_size: int | list[int]
    stride: int | list[int]
    padding: int | list[int]
    output_padding: int | list[int]
    dilation: int | list[int]
    groups: int
    ceil_mode: bool
    output_size: int | list[int]
    # BatchNorm1d, BatchNorm2d
    num_features: int
    eps: float
    affine: bool
    # Dropout, LeakyReLU, Flatten
    p: float
    negative_slope: float
    start_dim: int
    end_dim: int
    # Embedding, EmbeddingBag
    num_embeddings: int
    embedding_dim: int
    mode: str
    # LSTM, GRU, RNN
    input_size: int
    hidden_size: int
    num_layers: int
    batch_first: bool
    bidirectional: bool
    # the advisor's own: Reshape, Gaussian, RBM, PoolOverTime, Residual, Concat
    shape: list[int]
    pools: list[str]  # PoolOverTime's readouts, in order: "last", "max"
    features: int
    visible: int
    hidden: int
    body: list[Layer]
    shortcut: list[Layer]
    branches: list[list[Layer]]
    dim: int


class Layer(TypedDict):
    kind: str  # a torch.nn class name, or RBM, Reshape, LastStep, PoolOverTime, Residual, Concat
    args: LayerArgs


class Reason(TypedDict):
    rule: str
    text: str
    source: str


class Io(TypedDict):
    input_shape: list[int]
    input_dtype: str  # "float32", or "int64" for token ids
    vocab_size: int | None
    target: str  # "class", "class_per_step", "value", "input", "none"
    outputs: int | None
    latent_size: int | None


class Training(TypedDict):
    batch_size: int
    init_scale: float
    optimizer: str
    learning_rate: float
    epochs: int
    loss: str
    init: NotRequired[str]  # "uniform_fan_in": at most 1/sqrt(fan-in) per weight; absent for RBM and DBN
    momentum: NotRequired[float]
    betas: NotRequired[list[float]]  # Adam's (beta1, beta2) where a rule sets them (DCGAN's image GANs)
    weight_decay: NotRequired[float]  # a probe's next step against over-fitting (engine/variation.py)
    # "mixture": a VAE draws new codes from a mixture fitted to its training codes (train.prior.mixture)
    prior: NotRequired[str]


class MemoryBytes(TypedDict):
    """The peak of live bytes in one training step (`total`) and its make-up at that moment."""

    weights: int
    gradients: int
    optimizer: int
    activations: int
    batch: int  # inputs and targets
    workspace: int  # gradient buffers in flight, the optimiser's temporaries
    total: int


class MeasuredAt(TypedDict):
    batch_size: int
    threads: int | None
    allocator: str
    device: str
    # which per-batch figure predicts the epoch: "trimmed mean + gathering" (now), "mean + gathering",
    # "mean" or "median" (older measurements)
    step: NotRequired[str]
    # the batch the sweep measured best per example where it is not the plan's (rule plan.measured)
    best_batch: NotRequired[int]


class Scaling(TypedDict):
    """How an estimate's time was divided over several data-parallel devices (only where devices > 1)."""

    basis: str  # "W §III-H constant" or "measured"
    efficiency: float  # throughput of the devices over that many times one device's
    cut_per_doubling: NotRequired[float]  # the constant's
    # measured only: the data-parallel calibration, its device, the world sizes it ran, and whether the
    # plan's device count lies past the largest of them (the measured loss per doubling carried on)
    calibration: NotRequired[int]
    device: NotRequired[str]
    world_sizes: NotRequired[list[int]]
    extrapolated: NotRequired[bool]


class Interval(TypedDict):
    """An estimate's 90% bounds for each time it gives: [low, high] seconds, from the 5th and 95th
    percentiles of measured / estimated over its basis's validation (advisor/engine/intervals.py)."""

    seconds_per_batch: list[float]
    seconds_per_epoch: list[float]
    seconds_to_train: list[float]


class CorrectionBasis(TypedDict):
    """An estimate's `correction`: whether the device's learned correction timed it, and why (it must have
    a lower cross-validated error than the profile alone on the device's reliable measurements)."""

    used: bool
    text: str
    rows: int
    networks: int
    median_error: float  # the correction's, networks left out
    profile_median_error: float  # the profile's own on the same rows


class Estimate(TypedDict):
    seconds_per_batch: float
    seconds_per_epoch: float
    seconds_to_train: float
    basis: str  # "catalog", "profiled", "predicted" or "measured"
    expected_error: NotRequired[float]  # the relative band the basis's validation supports
    interval: NotRequired[Interval]  # 90% bounds of each time (absent in estimates stored before)
    correction: NotRequired[CorrectionBasis]  # profiled or predicted, where the device has a learned model
    batch_size: NotRequired[int]
    batches_per_epoch: NotRequired[int]
    devices: NotRequired[int]
    device: NotRequired[str]
    compute_seconds_per_epoch: NotRequired[float]
    data_seconds_per_epoch: NotRequired[float]
    scaling: NotRequired[Scaling]
    # measured estimates only
    analytic: NotRequired[Estimate]  # the estimate before the measurement, at that batch
    error_vs_analytic: NotRequired[float]
    measured_at: NotRequired[MeasuredAt]
    calibration: NotRequired[int]


class ProbeEstimate(TypedDict):
    """What a candidate's latest finished probe measured (a candidate's `accuracy_probe`)."""

    probe: int
    score: float
    metric: str | None
    expected: NotRequired[dict[str, Any] | None]
    time_to_target: NotRequired[dict[str, Any] | None]
    # true on the one probed candidate the probes' curves now expect to reach the target first (by time)
    expected_first: NotRequired[bool]


class Candidate(TypedDict):
    family: str
    depth: str  # "shallow" or "deep"
    published: str | None
    networks: dict[str, list[Layer]]
    hidden_sizes: list[int]
    io: Io
    parameters: int
    flops_per_example: int
    activations_per_example: int
    training: Training
    memory_bytes: MemoryBytes
    resident_bytes: int | None  # CPU plans: simulated glibc heap + library code; None on a GPU
    reasons: list[Reason]
    estimate: Estimate
    accuracy_probe: NotRequired[ProbeEstimate]


class Trainable(TypedDict):
    """What building, timing and training a candidate's networks reads (the engine's counts and memory, the
    calibration, the probe, a download): a Candidate is one, and so are the reference networks of
    advisor/calibration/examples.py. Read-only, so that a Candidate passes for one."""

    family: ReadOnly[str]
    networks: ReadOnly[dict[str, list[Layer]]]
    io: ReadOnly[Io]
    training: ReadOnly[Training]
    published: ReadOnly[NotRequired[str | None]]


class HardwarePlan(TypedDict):
    device: str  # "cpu" or "gpu"
    threads: int
    threads_basis: NotRequired[str]  # "cores", "profiled" or "measured"; absent in recommendations before it
    gpus: int
    nodes: int
    parallelism: str  # "none", "data", "model", "hybrid"
    sync: str  # "none", "sync", "mixed", "async"
    reasons: list[Reason]


class Dataflow(TypedDict):
    dataset_bytes: float
    fits_in_ram: bool
    fits_in_gpu: bool
    transfer_seconds_per_epoch: float
    storage_seconds_per_epoch: float
    io_seconds_per_epoch: float
    effective_compute_fraction: NotRequired[float]  # set once the compute time is known
    reasons: list[Reason]


class PlausibilityWarning(TypedDict):
    """Values that pass their own checks but contradict each other (advisor/engine/plausibility.py)."""

    field: str  # the TaskSpec's dotted path, as in a SpecError
    message: str


class Recommendation(TypedDict):
    """advisor.engine.recommend's answer; as stored and served (advisor.queries.recommendation_payload) also
    its `id` and `engine_version`. A models.Recommendation row keeps it in `result`."""

    id: NotRequired[int]
    engine_version: NotRequired[int]
    spec: TaskSpec
    candidates: list[Candidate]
    hardware_plan: HardwarePlan
    dataflow: Dataflow
    reasons: list[Reason]
    warnings: list[PlausibilityWarning]
    # a recommendation timed from a device: that device's profile (engine.profile.DeviceProfile) and its id
    device_profile: NotRequired[dict[str, Any]]


# why a measured configuration (advisor.calibration.contention.judge) or a device profile is unreliable: the
# one list the API's schema and docs/CONTRACT.md give
UNRELIABILITY_CODES = ("interval", "cpu_share", "runnable", "steal", "throttled", "gpu_shared", "hurried")


class Unreliability(TypedDict):
    """Why a measured configuration is unreliable (advisor.calibration.contention.judge)."""

    code: str  # one of UNRELIABILITY_CODES
    text: str


class CgroupFigures(TypedDict):
    """The cgroup's CPU figures across the timed loop (deltas)."""

    version: str  # "v1" or "v2"
    usage_seconds: float  # CPU seconds of every process in the cgroup
    nr_throttled: float  # periods the quota ran out
    throttled_seconds: float


class GpuFigures(TypedDict):
    other_processes: int  # the most seen at once, ourselves not counted
    utilisation: float  # percent, median of the samples (ours included)


class Contention(TypedDict):
    """Per configuration (measure()'s `contention`); None where a figure could not be read."""

    cpus: int | None  # CPUs /proc/stat counts (the host's in a container)
    cpu_share: float | None  # process CPU seconds / (timed seconds x threads); CPU only
    cpu_per_wall: float | None  # process CPU seconds / timed seconds: at least one busy thread is ~1
    runnable_median: float | None  # runnable tasks (ours included) over the samples
    runnable_max: int | None
    runnable_above_cpus: float | None  # share of the samples with more runnable tasks than CPUs
    samples: int
    steal_share: float | None  # /proc/stat steal ticks over all ticks, across the timed loop
    cgroup: CgroupFigures | None
    gpu: GpuFigures | None  # via NVML


class Measurement(TypedDict):
    """One measured configuration: what advisor.calibration.measure() returns (the contract's fields, and the
    step's FLOPs, user and system time, page faults and raw samples besides)."""

    status: str  # "ok" or "oom"
    message: str
    seconds_per_batch: float | None
    mean_seconds_per_batch: float | None
    # seconds to gather one shuffled batch from an in-memory data set of the job's size (calibration
    # children add it; absent from measure() called alone and from older results)
    gather_seconds_per_batch: NotRequired[float]
    iqr: float | None
    iterations: int
    examples_per_second: float | None
    peak_memory_bytes: int | None
    achieved_flops: float | None
    device: str
    threads: int | None
    batch_size: int
    allocator: str
    warmup: NotRequired[int]
    noisy: NotRequired[bool]  # descriptive: IQR above 10% of the median
    # (added) what acts: the median not pinned within ±5% in the time given, or contention seen; absent in
    # results measured before (reliable)
    unreliable: NotRequired[bool]
    unreliable_reasons: NotRequired[list[Unreliability]]
    trimmed_mean_seconds_per_batch: NotRequired[float]
    median_interval: NotRequired[list[float] | None]
    interval_halfwidth: NotRequired[float | None]
    stopped: NotRequired[str]  # "precise", "time" or "minimum"
    contention: NotRequired[Contention | None]
    # the step measured: absent where it ran out of memory before it was built
    family: NotRequired[str]
    flops_per_example: NotRequired[int]
    step_flops_per_example: NotRequired[int]
    step_flops_formula: NotRequired[str]
    error: NotRequired[str]  # out of memory: the exception's first line
    # memory: live_tensor_peak_bytes is what engine.memory_for estimates; rss_growth_bytes on a CPU,
    # max_memory_reserved_bytes on CUDA (else null)
    live_tensor_peak_bytes: NotRequired[int | None]
    rss_growth_bytes: NotRequired[int | None]
    max_memory_reserved_bytes: NotRequired[int | None]
    samples: NotRequired[list[float]]  # every timed step's seconds
    user_seconds_per_step: NotRequired[float]
    system_seconds_per_step: NotRequired[float]
    minor_faults_per_step: NotRequired[float]
    major_faults_per_step: NotRequired[float]


class EpochScore(TypedDict):
    """One scored epoch of a probe's training run."""

    epoch: int
    val: float
    test: float
    val_loss: float
    seconds: float  # since training began
    train_seconds: float  # of those, the seconds inside training steps (the rest is scoring)


class TrainingRun(TypedDict):
    """What the probe's train step returns (advisor/probe/learning/train.py): a probe's results.shallow and
    results.deep, and each point of its learning curve."""

    family: str | None
    depth: str | None
    parameters: int | None
    batch_size: int
    steps_per_epoch: int
    train_examples: int
    max_epochs: int
    epochs: list[EpochScore]
    best_epoch: int | None
    score: float | None  # the held-out test score at the best validation epoch
    val_score: float | None
    train_score: float | None
    stopped: str  # "epochs", "plateau", "time", "stopped" or "diverged"
    seconds: NotRequired[float]  # set when it ends


class Verdict(TypedDict):
    """What a probe concludes: shallow or deep, on the sample and expected at full size."""

    text: str
    metric: str  # "accuracy", "r2" or "explained_variance"
    target: float | None
    chosen: str | None  # "shallow", "deep", or None when nothing was trained
    deep_needed: bool | None  # None when no network could be trained
    shallow_score: float | None
    deep_score: float | None
    baseline_score: float | None
    met: bool | None  # the chosen network's held-out score reached the target; None without a target or run
    expected: dict[str, Any] | None
    notes: list[str]
    reasons: list[dict[str, str]]
    time_to_target: NotRequired[dict[str, Any] | None]
    # the classical baseline chosen by cross-validation, with its parameters
    baseline_model: NotRequired[str | None]
    # per "shallow", "deep", "baseline": the median and range over the probe's repeated splits (small samples)
    spread: NotRequired[dict[str, dict[str, Any]]]
    # where the target was missed: the diagnosis and the candidate to probe next (probe/learning/nextstep.py)
    next: NotRequired[dict[str, Any] | None]


class GenerationVerdict(TypedDict):
    """What a generation probe concludes: its generator's two-sample score on the held-out split against
    `target.two_sample`, beside a Gaussian mixture's (advisor/probe/learning/verdict.py)."""

    text: str
    metric: str  # "two_sample"
    target: float | None  # the spec's target.two_sample
    chosen: str | None  # "deep": the role of the generator (its index is the probe's deep_candidate)
    family: str | None  # "gan" or "vae"
    score: float | None  # the generator's two-sample score; None when none was trained
    baseline_score: float | None  # the Gaussian mixture's
    real_score: float | None  # real training examples against the held-out ones: the test's ceiling here
    met: bool | None  # score >= target; None without a target or a score
    notes: list[str]
    reasons: list[dict[str, str]]
