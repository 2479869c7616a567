"""train.py of a download: the recommended set-up as a Config whose every chosen value names its rule, the
family's own training loop, the data loading and the command line.

`LOOPS` is the one table of training loops, keyed by the registry's steps (advisor/engine/families/): each
names the piece (advisor/export/pieces/) holding that way of training's four functions (`check_shapes`,
`make_step`, `make_evaluate`, `synthetic_batch`). A family that trains by an existing step needs nothing
here; a new step needs its piece and its row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.contract import Reason
from advisor.engine.families import family_of
from advisor.engine.families.family import ADVERSARIAL, BACKPROP, CONTRASTIVE, PRETRAINED, VARIATIONAL, Step
from advisor.engine.families.roles import CLASSIFIER, DECODER, DISCRIMINATOR, GENERATOR, MODEL, network_input
from advisor.engine.layers import count
from advisor.export import source
from advisor.export.pieces.stopping import MIN_DELTA, MIN_GAIN, PATIENCE
from advisor.export.source import Call, literal


@dataclass(frozen=True)
class Loop:
    piece: str  # the piece with check_shapes, make_step, make_evaluate and synthetic_batch
    output: str  # the role whose output the loss compares (Config.output_shape, sigmoid_output)
    text: str  # what one update does, for train.py's docstring
    scored: bool = True  # False: no held-out score to stop on (every epoch runs)


LOOPS: dict[Step, Loop] = {
    BACKPROP: Loop("backprop", MODEL, "forward, loss, backward, update (backpropagation)"),
    ADVERSARIAL: Loop(
        "adversarial",
        DISCRIMINATOR,
        "the discriminator on real and generated examples, then the generator through it (as DCGAN)",
        scored=False,
    ),
    VARIATIONAL: Loop(
        "variational", DECODER, "encoder, a reparameterised sample of the code, decoder: the negative ELBO"
    ),
    CONTRASTIVE: Loop("contrastive", MODEL, "one step of contrastive divergence (CD-1) on every RBM"),
    PRETRAINED: Loop(
        "pretrained",
        CLASSIFIER,
        "CD-1 pre-training on every RBM of the stack, then one fine-tuning step through the stack and "
        "its classifier, on the same mini-batch",
    ),
}
# What train.py calls each piece it copies (the family's own loop: its Loop's text).
SECTIONS = {
    "setup": "the set-up: initial weights, optimiser, device and threads",
    "stopping": "early stopping",
    "cd": "contrastive divergence (CD-1)",
    "data": "the data: reading the probe's formats, the split, the scaling",
    "fit": "the epoch loop: mini-batches, validation, the best epoch",
    "contrastive": "restricted Boltzmann machines",
    "main": "the command line",
}
# The loop pieces define the same four functions; main's imports of them are pointed at the candidate's.
LOOP_INTERFACE = "backprop"

# The probe's split and epoch cap (advisor/probe/learning/split.py, train.py; a test holds them equal) and its
# early stopping (the same piece), so that train.py scores as the probe did.
MAX_EPOCHS = 5000
VALIDATION_SHARE = TEST_SHARE = 0.2
SEED = 0


def loop_of(candidate: Mapping[str, Any]) -> Loop:
    return LOOPS[family_of(candidate).step]


def output_shape(candidate: Mapping[str, Any], role: str) -> tuple[int, ...]:
    return count(candidate["networks"][role], network_input(candidate, role)).shape


def _ends_in(candidate: Mapping[str, Any], role: str, kind: str) -> bool:
    """Whether the network's last layer is `kind`, as the advisor's steps read it (a reshape after a sigmoid
    hides it: the calibration's VAE step then takes the squared error, and so does train.py)."""
    layers = candidate["networks"].get(role) or []
    return bool(layers) and layers[-1]["kind"] == kind


def input_scaling(candidate: Mapping[str, Any]) -> tuple[str, str]:
    """How train.py scales the inputs, and why: as the probe does (standardised on the training split, token
    ids untouched), and into the output layer's range where the network rebuilds or generates them."""
    io, step = candidate["io"], family_of(candidate).step
    if io.get("vocab_size"):
        return "ids", "token ids feed an embedding as whole numbers"
    if step == CONTRASTIVE:
        return "unit", "an RBM's visible units are probabilities: inputs scaled to [0, 1]"
    if step == ADVERSARIAL and _ends_in(candidate, GENERATOR, "Tanh"):
        return "symmetric", "the generator ends in tanh: real examples scaled to [-1, 1]"
    rebuilds = (step == BACKPROP and io.get("target") == "input") or step in (VARIATIONAL, ADVERSARIAL)
    output = DECODER if step == VARIATIONAL else GENERATOR if step == ADVERSARIAL else MODEL
    if rebuilds and _ends_in(candidate, output, "Sigmoid"):
        return "unit", "the output ends in a sigmoid: inputs scaled to [0, 1]"
    return "standardise", "standardised on the training split (mean 0, standard deviation 1)"


def find(reasons: Sequence[Reason], *rules: str) -> Reason | None:
    """The first reason of one of `rules` (a rule ending in `*` matches its prefix)."""
    for rule in rules:
        for r in reasons:
            wanted = rule.removesuffix("*")
            if r.get("rule") == rule or (rule.endswith("*") and str(r.get("rule", "")).startswith(wanted)):
                return r
    return None


@dataclass(frozen=True)
class Setting:
    field: str
    value: object
    rule: Reason | None = None  # the rule that chose the value
    note: str = ""  # what else to say

    def comment(self, said: set[str]) -> str:
        """The rule in full the first time (`said` collects them), by its id after that, then the note."""
        if self.rule is None:
            return self.note
        rule = str(self.rule["rule"])
        if rule in said:
            text = f"{rule}, as above."
        else:
            said.add(rule)
            text = f"{rule}: {self.rule.get('text', '')} [{self.rule.get('source', '')}]"
        return f"{text} {self.note}".strip()


EARLY_STOPPING = (
    "Early stopping: no better validation score, nor a validation loss 1% and 0.01 lower, for 20 epochs "
    "(Prechelt 1998); the best epoch's weights are kept."
)
NO_EARLY_STOPPING = "Without a held-out score to stop on, every epoch runs."
SPLIT = "The validation split picks the epoch; the test split, never trained on, gives the score."


@dataclass(frozen=True)
class TrainPy:
    """What a download's train.py is rendered from: the candidate, the spec and hardware plan it was
    recommended for, the title its docstring gives, the allocator environment a CPU starts it with (and why),
    and what a probe adds: the sample's label column, a note on the sample, the probe's seed."""

    candidate: Mapping[str, Any]
    spec: Mapping[str, Any]
    plan: Mapping[str, Any]
    title: str
    env: Mapping[str, str]
    env_why: str
    label_column: str
    split_note: str
    seed: int = SEED


def settings(setup: TrainPy) -> list[Setting]:
    """Config's fields in order, each with the rule (or the reason) that chose its value."""
    candidate, spec, plan = setup.candidate, setup.spec, setup.plan
    label_column, split_note, seed = setup.label_column, setup.split_note, setup.seed
    io, training = candidate["io"], candidate["training"]
    reasons = candidate.get("reasons") or []
    plan_reasons = plan.get("reasons") or []
    loop = loop_of(candidate)
    family = family_of(candidate)
    scaling, scaling_why = input_scaling(candidate)
    generation = spec.get("task") == "generation"
    next_step = generation and (
        io.get("target") == "class_per_step"
        or (io.get("target") == "value" and spec.get("generation") == "sequence")
    )
    sigmoid_role = GENERATOR if loop.output == DISCRIMINATOR else loop.output
    gpu = plan.get("device") == "gpu"
    optimiser = find(reasons, "train.optimizer*")
    momentum, betas = training.get("momentum"), training.get("betas")
    decay = training.get("weight_decay")
    capped = training.get("init") == "uniform_fan_in"
    losses = {"cross_entropy": "cross-entropy over the classes", "mse": "mean squared error"}
    unsupervised = io.get("target") in ("input", "none")
    epochs = find(reasons, "train.epochs")
    return [
        Setting("family", family.key, note=f"a {family.title}; one update: {loop.text}"),
        Setting("input_shape", tuple(io["input_shape"]), note="one example"),
        Setting("input_dtype", io.get("input_dtype") or "float32"),
        Setting("vocab_size", io.get("vocab_size")),
        Setting("target", io.get("target") or "class"),
        Setting("output_shape", output_shape(candidate, loop.output), note=f"the {loop.output}'s output"),
        Setting("latent_size", io.get("latent_size")),
        Setting("sigmoid_output", _ends_in(candidate, sigmoid_role, "Sigmoid")),
        Setting("inputs", scaling, note=scaling_why),
        Setting("next_step", next_step, note="sequences generated step by step" if next_step else ""),
        Setting(
            "label_column", "" if unsupervised else label_column, note=split_note if label_column else ""
        ),
        Setting(
            "batch_size",
            int(training["batch_size"]),
            find(reasons, "plan.measured", "batch.profiled", "gpu.memory", "batch.start"),
        ),
        Setting("init_scale", float(training["init_scale"]), find(reasons, "init.rbm", "init.small")),
        Setting(
            "fan_in_cap",
            capped,
            note="training.init uniform_fan_in: at most 1/sqrt(fan-in)" if capped else "",
        ),
        Setting("optimizer", str(training["optimizer"]), optimiser),
        Setting("learning_rate", float(training["learning_rate"]), optimiser),
        Setting("momentum", None if momentum is None else float(momentum), optimiser if momentum else None),
        Setting("betas", None if betas is None else tuple(map(float, betas)), optimiser if betas else None),
        Setting(
            "weight_decay",
            None if decay is None else float(decay),
            note="a probe's next step: it over-fitted" if decay is not None else "",
        ),
        Setting("epochs", int(training["epochs"]), epochs),
        Setting(
            "examples", int(spec["data"]["examples"]), note="the data size the recommendation was made for"
        ),
        Setting("loss", str(training["loss"]), note=losses.get(str(training["loss"]), "")),
        Setting(
            "device",
            "cuda" if gpu else "cpu",
            find(plan_reasons, "gpu.prefer", "gpu.memory") if gpu else None,
            "" if gpu else "the plan's: a CPU",
        ),
        Setting(
            "threads",
            int(plan.get("threads") or 1),
            find(plan_reasons, "plan.measured", "cpu.threads.profiled", "cpu.threads.physical"),
        ),
        Setting("patience", PATIENCE, epochs, EARLY_STOPPING if loop.scored else NO_EARLY_STOPPING),
        Setting("min_gain", MIN_GAIN),
        Setting("min_delta", MIN_DELTA),
        Setting("max_epochs", MAX_EPOCHS),
        Setting("validation_share", VALIDATION_SHARE, find(reasons, "net.shallow.validate"), SPLIT),
        Setting("test_share", TEST_SHARE),
        Setting("seed", seed, note="the probe's: its split and its first weights" if seed != SEED else ""),
    ]


def config_block(items: Sequence[Setting]) -> str:
    said: set[str] = set()
    comments = [s.comment(said) for s in items]
    call = Call("Config", [f"{s.field}={literal(s.value)}" for s in items], comments)
    return "\n".join(call.lines("", lead="CONFIG = "))


def allocator_block(env: Mapping[str, str], why: str) -> str:
    lines = source.comment_lines(why, "") if why else []
    pairs = [f"{literal(k)}: {literal(v)}" for k, v in env.items()]
    flat = "ALLOCATOR = {" + ", ".join(pairs) + "}"
    if len(flat) <= source.WIDTH:
        return "\n".join([*lines, flat])
    body = "".join(f"{source.INDENT}{p},\n" for p in pairs)
    return "\n".join([*lines, "ALLOCATOR = {\n" + body + "}"])


def train_file(setup: TrainPy) -> str:
    candidate, env = setup.candidate, setup.env
    loop = loop_of(candidate)
    imports, pieces = source.assemble(
        [("main", "main")], swap={LOOP_INTERFACE: loop.piece}, elsewhere={"layers": "model"}
    )
    config = next(d for d in pieces if "Config" in d.names)
    rest, current = [], ""
    for d in pieces:
        if d is not config:
            heading = f"the training step ({loop.piece})" if d.piece == loop.piece else SECTIONS[d.piece]
            rest.append(d.text if d.piece == current else f"# --- {heading}\n{d.text}")
            current = d.piece
    run = " ".join(f"{k}={v}" for k, v in env.items())
    start = f"{run} python train.py" if run else "python train.py"
    doc = (
        f"{setup.title}: trains the {family_of(candidate).title} of model.py with its recommended set-up."
        f"\n\nOne update: {loop.text}.\n\n"
        f"    {start} --data FILE   # CSV, NPZ, NPY or a ZIP of images\n"
        f"    {start} --synthetic --max-steps 2   # random data\n\n"
        "CONFIG below holds the set-up; a comment names the rule behind each value it chose."
    )
    if env:
        doc += " On a CPU, start it with the allocator environment above (ALLOCATOR says why)."
    items = settings(setup)
    sections = [
        config.text,
        config_block(items),
        allocator_block(env, setup.env_why),
        *rest,
        'if __name__ == "__main__":\n    main(CONFIG, ALLOCATOR)',
    ]
    return source.module(source.docstring(doc), source.import_block(imports), sections)
