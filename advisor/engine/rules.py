"""The rule catalog: every rule the engine applies, its condition, effect and citation (knowledge/rules.md).

The conditions are evaluated where the decision is made (choice, sizing, training, plan, dataflow); each
firing becomes a reason `{"rule", "text", "source"}` whose text says, for this task, what fired and why.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from typing import Any

W = "Wünsche 2018"
S = "Shi et al. 2016"


@dataclass(frozen=True)
class Rule:
    id: str
    when: str
    then: str
    text: str  # for a beginner, independent of the task
    source: str


_RULES = (
    # -- choice of network (W §III-A, §III-D)
    Rule(
        "net.generation.random",
        "generate new data like the training data, no control over the output",
        "GAN first; VAE and LSTM as alternatives",
        "To make new examples that look like your data, a GAN is built for exactly that: a generator learns "
        "to "
        "fool a discriminator that tells real from generated.",
        f"{W} §III-D (Patterson)",
    ),
    Rule(
        "net.generation.controlled",
        "generate data that must follow a specification",
        "VAE first; GAN as alternative",
        "When the generated data must follow what you ask for, a VAE lets you steer the output through its "
        "latent code.",
        f"{W} §III-D",
    ),
    Rule(
        "net.generation.sequence",
        "generate sequential data (text, music, series)",
        "LSTM first",
        "To generate text, music or series, an LSTM predicts the next step from the ones before it.",
        f"{W} §III-D (text generation with LSTM, refs [20][21])",
    ),
    Rule(
        "net.vision.cnn",
        "classify or interpret images",
        "CNN first",
        "Images: a convolutional network (CNN) compresses the picture step by step into what it shows.",
        f"{W} §III-D",
    ),
    Rule(
        "net.vision.dbn",
        "visual task with little labelled data",
        "DBN first or as a strong alternative",
        "With few labelled images, a deep belief network first learns from all images without labels "
        "(RBM pretraining) and is then fine-tuned on the labelled ones.",
        f"{W} §II, §III-D (Zhong 2016)",
    ),
    Rule(
        "net.sequence.lstm",
        "classify or interpret data arriving over time",
        "LSTM first; RNN as alternative",
        "Data over time (audio, sensors, text): an LSTM remembers what came before; a plain RNN is the "
        "simpler alternative.",
        f"{W} §III-D (Soltau 2016)",
    ),
    Rule(
        "net.published",
        "the task matches one covered in the literature",
        "propose the published network first",
        "Your task matches a well-studied one: a published network (AlexNet, GoogLeNet, ResNet-50) is a "
        "tested starting point.",
        f"{W} §III-D, last paragraph",
    ),
    Rule(
        "net.shallow.first",
        "simple task or unclear case",
        "shallow network first, deep as the fallback",
        "A simple task: a shallow network (one hidden layer) trains fast; if it misses your accuracy target, "
        "try the deeper network listed after it.",
        f"{W} §III-A",
    ),
    Rule(
        "net.deep.structure",
        "image, audio or time structure",
        "deep network",
        "Images, audio and signals that change over time need a deep network to learn their structure.",
        f"{W} §III-A",
    ),
    Rule(
        "net.shallow.validate",
        "a shallow network is recommended",
        "careful validation on a hold-out split",
        "Shallow networks can overfit or miss a complex pattern: keep part of your data aside and check the "
        "accuracy on it.",
        f"{W} §III-A-1",
    ),
    Rule(
        "net.pretrain.unlabelled",
        "non-image task where most examples carry no label",
        "DBN (RBM pretraining on all examples) as an alternative",
        "Most of your examples have no label: RBM pretraining can learn from all of them before fine-tuning "
        "on the labelled ones.",
        f"{W} §II (DBN 'gentle' backpropagation after RBM pretraining); Hinton, Osindero & Teh 2006",
    ),
    Rule(
        "net.tokens.embedding",
        "the input is token ids",
        "start with an Embedding layer",
        "Your input is words or tokens: an embedding layer turns each token id into a vector the network "
        "can learn from.",
        "Bengio et al. 2003, 'A Neural Probabilistic Language Model'; Shi et al. 2016 Table 2 (LSTM-32/64)",
    ),
    # -- sizes and initial values (W §III-A to §III-C)
    Rule(
        "size.ffn.hidden",
        "FFN",
        "hidden nodes >= inputs, near the inputs/outputs",
        "A feed-forward network works best with at least as many hidden nodes as inputs, and not far more.",
        f"{W} §III-B",
    ),
    Rule(
        "size.ae.bottleneck",
        "auto-encoder",
        "code layer smaller than the input; output = input size",
        "An auto-encoder squeezes the input through a smaller code layer and rebuilds it: the code is your "
        "compressed data.",
        f"{W} §II, §III-B",
    ),
    Rule(
        "size.deep.cnn",
        "CNN",
        "layer sizes decrease step by step",
        "A CNN shrinks the image stage by stage (more channels, fewer pixels) until only what matters is "
        "left.",
        f"{W} §III-C",
    ),
    Rule(
        "size.deep.dn",
        "deconvolutional network",
        "sizes increase layer by layer",
        "A deconvolutional network does the opposite of a CNN: it grows a small code layer by layer into a "
        "full image.",
        f"{W} §III-C",
    ),
    Rule(
        "size.oversize",
        "hidden nodes well above the optimum",
        "warn: lower accuracy or more epochs",
        "Far more hidden nodes than needed can cost accuracy and epochs, more so in deep networks.",
        f"{W} §III-B",
    ),
    Rule(
        "size.capacity",
        "accuracy target and amount of data",
        "capacity grows with both",
        "A higher accuracy target and more data justify a bigger network; with little data a big network "
        "only memorises.",
        f"{W} §III-A, §III-B; Goodfellow, Bengio & Courville 2016, §5.2 (capacity)",
    ),
    Rule(
        "size.recurrent",
        "RNN or LSTM",
        "2 stacked layers; units >= features per step; 128/256/512 units for small/medium/large vocabularies",
        "Two stacked recurrent layers, with at least as many units as features per step (for words: more "
        "units for larger vocabularies).",
        f"{S} Table 2 and DLBench (2 LSTM layers, ~512 units for 10,000 words); Zaremba et al. 2014; "
        f"{W} §III-B",
    ),
    Rule(
        "size.exceeds.memory",
        "even the smallest useful network does not fit any catalogued GPU or the RAM",
        "say so; recommend a smaller input, model parallelism or a cluster",
        "This network is larger than the memory of any GPU in the catalog: split it across GPUs (model "
        "parallelism) or make the input smaller.",
        f"{W} §III-G, §III-I-2",
    ),
    Rule(
        "init.small",
        "backpropagation training",
        "initial weights uniform in ±0.1",
        "Start the weights at small values (uniform in ±0.1) so training does not stray far from a good "
        "solution.",
        f"{W} §III-A",
    ),
    Rule(
        "init.rbm",
        "RBMs trained by contrastive divergence (rbm, dbn pretraining)",
        "initial weights from N(0, 0.01)",
        "RBMs start from very small random weights (about 0.01) and learn by contrastive divergence, "
        "not backpropagation.",
        "Hinton 2010, 'A Practical Guide to Training Restricted Boltzmann Machines', §8",
    ),
    # -- training set-up
    Rule(
        "batch.start",
        "no better information",
        "64 fully connected, 16 CNN on large images, 128 RNN",
        "Start with this mini-batch size (what both CPUs and GPUs handled best in Shi et al.'s benchmark), "
        "then let a calibration try others.",
        f"{S} §4",
    ),
    Rule(
        "train.optimizer",
        "every candidate",
        "SGD with momentum; Adam for GAN and VAE",
        "Plain SGD with momentum is the robust default; GANs and VAEs train more stably with Adam.",
        "Goodfellow, Bengio & Courville 2016, §8.3; Radford et al. 2016 (DCGAN, Adam 2e-4); "
        "Kingma & Welling 2014 (VAE)",
    ),
    Rule(
        "train.epochs",
        "every candidate",
        "a generous epoch budget, stopped early on the hold-out loss",
        "Train for up to this many passes over the data, and stop as soon as the hold-out error stops "
        "improving.",
        "Goodfellow, Bengio & Courville 2016, §7.8 (early stopping)",
    ),
    # -- processing units (W §III-E to §III-I, S §4-§6)
    Rule(
        "cpu.threads.physical",
        "CPU training",
        "threads = physical cores, never more",
        "Use one thread per physical core: hyper-threads make training slower (Caffe on 4 cores: 0.58 s at "
        "4 threads, 15.4 s at 8).",
        f"{W} §III-F, Table I; {S} §5",
    ),
    Rule(
        "cpu.single.avoid",
        "network with many nodes",
        "use all physical cores",
        "A network this large is far too slow on one thread: use all physical cores.",
        f"{W} §III-F-1",
    ),
    Rule(
        "gpu.prefer",
        "a GPU is available and the training state fits",
        "train on the GPU",
        "Your GPU holds the model, its gradients, optimiser state and a mini-batch: train there (Shi et al. "
        "measured up to 112x over a 4-core CPU).",
        f"{S} §4, §6; {W} §III-G",
    ),
    Rule(
        "gpu.memory",
        "the estimate does not fit the GPU",
        "smaller batch, model parallelism or a bigger GPU",
        "The training state does not fit the GPU's memory: use a smaller mini-batch, split the model over "
        "GPUs, or pick a GPU with more memory.",
        f"{W} §III-G; {S} §6",
    ),
    Rule(
        "gpu.overlap",
        "GPU training with data from host memory",
        "prefetch the next batch",
        "Copy the next mini-batch to the GPU while it computes the current one (prefetching), so it never "
        "waits for data.",
        f"{W} §III-G, §IV-B (Yang 2010)",
    ),
    Rule(
        "multigpu.gain",
        "several GPUs",
        "expect sub-linear gains",
        "More GPUs help less than you'd think: doubling them cut time by only 10-35% in Shi et al.'s runs; "
        "measure rather than assume.",
        f"{W} §III-H",
    ),
    Rule(
        "multigpu.data",
        "model fits one GPU",
        "data parallelism",
        "Each GPU holds a full copy of the network and trains on its share of every mini-batch; gradients "
        "are combined each step.",
        f"{W} §III-H-1",
    ),
    Rule(
        "multigpu.model",
        "model does not fit one GPU",
        "model parallelism",
        "The network is too big for one GPU: split its layers across GPUs (model parallelism).",
        f"{W} §III-H-1, §III-I-2",
    ),
    Rule(
        "multigpu.budget",
        "the time budget",
        "use more GPUs only when one cannot meet the budget",
        "More GPUs cost money and add communication: use them only when one GPU cannot meet your time "
        "budget.",
        f"{W} §III-H (costly; sub-linear), §III-I",
    ),
    Rule(
        "budget.unmet",
        "the estimated training time exceeds the time budget",
        "name the catalogued GPU that would meet it, or what else would",
        "The plan misses your time budget: the processing unit changes training time most, so the advisor "
        "names one that would meet it.",
        f"{W} §III-E (the processing unit has the biggest influence on computation time); {S} §4, §6",
    ),
    Rule(
        "sync.sync",
        "40 GPUs or fewer",
        "synchronous updates",
        "With 40 GPUs or fewer, synchronous updates (all GPUs agree after every step) work without limits.",
        f"{W} §III-H-2, §IV-B (Sastre Cabot)",
    ),
    Rule(
        "sync.mixed",
        "more than 40 GPUs, or several multi-GPU nodes",
        "mixed-asynchronous",
        "Across many GPUs or nodes: synchronous inside each node, asynchronous between them "
        "(mixed-asynchronous).",
        f"{W} §III-I-3, §IV-B",
    ),
    Rule(
        "cluster.only.large",
        "small-scale task",
        "no GPU cluster",
        "This task is small: a GPU cluster would spend more time communicating than it saves.",
        f"{W} §III-I",
    ),
    Rule(
        "gpu.direct",
        "several GPUs on one PCIe bus",
        "GPU-to-GPU transfers",
        "Let GPUs exchange data directly (GPUDirect / peer-to-peer) so the CPU is not the bottleneck.",
        f"{W} §IV-B",
    ),
    # -- data flow (W §II, §IV-B)
    Rule(
        "data.pcie",
        "training data in host memory fed to GPUs",
        "transfer time vs compute time",
        "Every mini-batch crosses the link to the GPU: if that takes longer than computing it, the GPU idles "
        "(W's example: 65.62% effective compute).",
        f"{W} §IV-B",
    ),
    Rule(
        "data.ram",
        "training data larger than host memory",
        "storage becomes the bottleneck",
        "Your data does not fit in RAM: it streams from storage every epoch, and the disk sets the pace "
        "(HDD far too slow; NVMe 3.5 GB/s; RAID 0 of five NVMe 17 GB/s).",
        f"{W} §IV-B",
    ),
    Rule(
        "data.gpu.fit",
        "training data fits the GPU's memory",
        "keep it resident on the GPU",
        "The whole dataset fits in GPU memory beside the model: load it once and skip per-epoch transfers.",
        f"{W} §II, §IV-B",
    ),
    Rule(
        "data.example.size",
        "large examples",
        "account for transfer per example",
        "Each example is large (a 512x512 greyscale image is 262,144 inputs): moving it costs time, "
        "especially when the network does little work per byte.",
        f"{W} §II",
    ),
    # -- process environment (project)
    Rule(
        "cpu.allocator",
        "CPU training with large tensors",
        "an allocator set-up that keeps memory",
        "On Linux, set MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ high (or preload jemalloc/tcmalloc) "
        "so big tensors are not returned to the system and faulted back every step.",
        "PyTorch Performance Tuning Guide, 'CPU specific optimizations'; Intel Extension for PyTorch tuning "
        "guide, 'Memory Allocator'",
    ),
)

RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in _RULES}


@cache
def _as_dicts() -> tuple[dict[str, str], ...]:
    return tuple(
        {"id": r.id, "text": r.text, "source": r.source, "when": r.when, "then": r.then} for r in _RULES
    )


def rules() -> list[dict[str, str]]:
    """Every rule: id, text (for a beginner), source, when, then."""
    return copy.deepcopy(list(_as_dicts()))


RULE_UNITS: tuple[Rule, ...] = _RULES


RULES: tuple[dict[str, str], ...] = _as_dicts()


def reason(rule_id: str, detail: str | None = None) -> dict[str, Any]:
    """A fired rule as a reason; `detail` says what it means for this task (else the rule's own text)."""
    rule = RULES_BY_ID[rule_id]
    return {"rule": rule.id, "text": detail or rule.text, "source": rule.source}
