"""One training step per way of training (`STEPS`, keyed by the registry's steps: a family trains as its
record in advisor/engine/families/ says), and synthetic data of the candidate's shapes.

FLOPs of one step, per example, in units of the forward FLOPs F of each network (a backward pass costs about
two forward passes: gradients with respect to inputs and to weights):
  backprop (ffn, ae, cnn, dn, rnn, lstm): forward + backward             = 3 F
  variational (vae; encoder E, decoder D): forward, reparameterise, back  = 3 (E + D)
  adversarial (gan; generator G, discriminator D), pytorch/examples dcgan:
      G(z) once; D on real and on fake (forward+backward: 6 D);
      generator step: D(fake) forward+backward through D and G (3 D + 2 G) = 3 G + 9 D
  contrastive (rbm), CD-1: up, down, up (3 products), two outer products  = 5 F
  pretrained (dbn): CD-1 on every RBM (greedy, each on the one below's
       probabilities), then one fine-tuning step through stack + classifier = 5 R + 3 (R + C) = 8 R + 3 C
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from advisor.calibration.flops import probe
from advisor.calibration.layers import RBM, Gaussian, build
from advisor.engine.families import family_of, roles
from advisor.engine.families.family import (
    ADVERSARIAL,
    BACKPROP,
    CONTRASTIVE,
    LOSS_ELBO_GAUSSIAN,
    PRETRAINED,
    VARIATIONAL,
    Step,
)
from advisor.export.pieces.adversarial import update as gan_update  # the GAN step, as downloads train it
from advisor.export.pieces.cd import cd1 as cd1_gradients  # CD-1, one definition for downloads too

Batch = tuple[torch.Tensor, ...]

_OPTIMIZERS: dict[str, str] = {
    "sgd": "SGD",
    "momentum": "SGD",
    "adam": "Adam",
    "adamw": "AdamW",
    "rmsprop": "RMSprop",
    "adagrad": "Adagrad",
    "adadelta": "Adadelta",
}


@dataclass(frozen=True)
class Draw:
    """How one tensor of a synthetic batch, [batch, *shape], is drawn; the same draw redraws it in place.

    measure() redraws its batch before every timed step: on one repeated batch, data-dependent kernels (ReLU,
    max-pooling, the loss) learn the pattern and a small CNN's step ran 3-9% fast
    (bench/results/harness_amd-epyc-2c/README.md). In place, because allocating a new batch per step changes
    the page faults and peak memory that measure() reports."""

    kind: str  # "unit": uniform [0, 1), valid for every loss; "ids": integers below `high`; "coins"; "normal"
    shape: tuple[int, ...]
    device: torch.device
    high: int = 0

    def new(self, batch: int) -> torch.Tensor:
        size = (batch, *self.shape)
        if self.kind == "ids":
            return torch.randint(self.high, size, device=self.device)
        if self.kind == "coins":
            return torch.randint(0, 2, size, device=self.device).float()
        if self.kind == "normal":
            return torch.randn(size, device=self.device)
        return torch.rand(size, device=self.device)

    def again(self, t: torch.Tensor) -> None:
        if self.kind == "ids":
            t.random_(0, self.high)
        elif self.kind == "coins":
            t.bernoulli_(0.5)
        elif self.kind == "normal":
            t.normal_()
        else:
            t.uniform_(0.0, 1.0)


@dataclass
class TrainingStep:
    """A ready training step: `run(batch)` does one whole update; `make_batch(b)` makes synthetic data and
    `refill(batch)` draws new values into it."""

    family: str
    nets: dict[str, nn.Module]
    run: Callable[[Batch], None]
    draws: tuple[Draw, ...]  # the batch's tensors, in order
    forward_flops: dict[str, int]  # per network, per example
    step_flops_per_example: int
    step_formula: str
    notes: list[str] = field(default_factory=list)

    def make_batch(self, b: int) -> Batch:
        return tuple(d.new(b) for d in self.draws)

    def refill(self, batch: Batch) -> None:
        for d, t in zip(self.draws, batch, strict=True):
            d.again(t)


def _backward(loss: torch.Tensor) -> None:
    loss.backward()


def _optimizer(params: Iterator[nn.Parameter], training: Mapping[str, Any]) -> torch.optim.Optimizer:
    name = str(training.get("optimizer") or "sgd").lower()
    cls = getattr(torch.optim, _OPTIMIZERS.get(name, name), None)
    if cls is None:
        raise ValueError(f"training.optimizer {name!r} is not a torch.optim optimizer")
    kwargs: dict[str, Any] = {"lr": float(training.get("learning_rate") or 0.01)}
    if name == "momentum":
        kwargs["momentum"] = 0.9
    # Other training fields the optimiser accepts (momentum, weight_decay, betas, ...) are passed through.
    accepted = inspect.signature(cls).parameters
    kwargs.update(
        {k: v for k, v in training.items() if k in accepted and k not in ("params", "lr") and v is not None}
    )
    opt: torch.optim.Optimizer = cls(params, **kwargs)
    return opt


def _last_is_sigmoid(layers: Sequence[Mapping[str, Any]]) -> bool:
    return bool(layers) and layers[-1]["kind"] == "Sigmoid"


def _input_draw(io: Mapping[str, Any], device: torch.device, *, flat: bool = False) -> Draw:
    """The network's input; `flat` for RBMs, which see an image as one vector."""
    shape = tuple(int(s) for s in io["input_shape"])
    if flat:
        shape = (math.prod(shape),)
    if io.get("input_dtype") == "int64" or io.get("vocab_size"):
        return Draw("ids", shape, device, int(io["vocab_size"]))
    return Draw("unit", shape, device)


def _reconstruction_loss(
    out: torch.Tensor, target: torch.Tensor, loss: str, sigmoid_out: bool
) -> torch.Tensor:
    target = target.reshape(out.shape).to(out.dtype)
    if loss == "bce":
        if sigmoid_out:
            return F.binary_cross_entropy(out, target)
        return F.binary_cross_entropy_with_logits(out, target)
    return F.mse_loss(out, target)


def _rbms(net: nn.Module) -> list[RBM]:
    return [m for m in net.modules() if isinstance(m, RBM)]


def make_step(
    candidate: Mapping[str, Any], device: str | torch.device = "cpu", nets: dict[str, nn.Module] | None = None
) -> TrainingStep:
    """Build the candidate's networks on `device` (unless given) and the family's training step."""
    dev = torch.device(device)
    nets = nets if nets is not None else build(candidate)
    for net in nets.values():
        net.to(dev).train()
    family = family_of(candidate)
    return STEPS[family.step](candidate, nets, dev, family.key)


def _backprop_step(
    candidate: Mapping[str, Any], nets: dict[str, nn.Module], dev: torch.device, family: str
) -> TrainingStep:
    io, training = candidate["io"], candidate.get("training") or {}
    model = nets[roles.MODEL]
    target = io.get("target") or "class"
    default_loss = {"class": "cross_entropy", "class_per_step": "cross_entropy"}.get(target, "mse")
    loss_name = str(training.get("loss") or default_loss)
    sigmoid_out = _last_is_sigmoid(candidate["networks"][roles.MODEL])
    x = _input_draw(io, dev)
    flops, out_shape = probe(model, x.new(2))
    opt = _optimizer(model.parameters(), training)
    if target == "input":
        draws: tuple[Draw, ...] = (x,)
    elif loss_name == "cross_entropy":
        steps = (int(io["input_shape"][0]),) if target == "class_per_step" else ()
        draws = (x, Draw("ids", steps, dev, int(io.get("outputs") or out_shape[-1])))
    else:
        draws = (x, Draw("coins" if loss_name == "bce" else "normal", tuple(out_shape), dev))

    def run(batch: Batch) -> None:
        x = batch[0]
        opt.zero_grad(set_to_none=True)
        out = model(x)
        if target == "input":
            loss = _reconstruction_loss(out, x, loss_name, sigmoid_out)
        elif loss_name == "cross_entropy":
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), batch[1].reshape(-1))
        else:
            loss = _reconstruction_loss(out, batch[1], loss_name, sigmoid_out)
        _backward(loss)
        opt.step()

    return TrainingStep(family, nets, run, draws, {roles.MODEL: flops}, 3 * flops, "3 F (forward + backward)")


def _latent_pair(
    io: Mapping[str, Any], dev: torch.device, on_data: nn.Module, on_latent: nn.Module
) -> tuple[Draw, int, int]:
    """A two-network family's data draw, and the forward FLOPs per example of the network fed
    the data and of the one fed a latent code (a GAN's discriminator and generator, a VAE's encoder and
    decoder)."""
    latent = int(io["latent_size"])
    x = _input_draw(io, dev)
    data_flops, _ = probe(on_data, x.new(2))
    latent_flops, _ = probe(on_latent, torch.randn(2, latent, device=dev))
    return x, data_flops, latent_flops


def _gan_step(
    candidate: Mapping[str, Any], nets: dict[str, nn.Module], dev: torch.device, family: str
) -> TrainingStep:
    io, training = candidate["io"], candidate.get("training") or {}
    latent = int(io["latent_size"])  # the generator's noise, drawn anew each step
    gen, disc = nets[roles.GENERATOR], nets[roles.DISCRIMINATOR]
    images, d_flops, g_flops = _latent_pair(io, dev, disc, gen)
    opt_g, opt_d = _optimizer(gen.parameters(), training), _optimizer(disc.parameters(), training)

    def run(batch: Batch) -> None:
        real = batch[0]
        gan_update(gen, disc, opt_g, opt_d, real, torch.randn(real.shape[0], latent, device=dev))

    flops = {roles.GENERATOR: g_flops, roles.DISCRIMINATOR: d_flops}
    formula = "3 G + 9 D (discriminator step on real and fake, then generator step through D)"
    return TrainingStep(family, nets, run, (images,), flops, 3 * g_flops + 9 * d_flops, formula)


def _vae_step(
    candidate: Mapping[str, Any], nets: dict[str, nn.Module], dev: torch.device, family: str
) -> TrainingStep:
    io, training = candidate["io"], candidate.get("training") or {}
    enc, dec = nets[roles.ENCODER], nets[roles.DECODER]
    x, e_flops, d_flops = _latent_pair(io, dev, enc, dec)
    sigmoid_out = _last_is_sigmoid(candidate["networks"][roles.DECODER])
    rec_name = "bce" if sigmoid_out else "mse"
    gaussian = training.get("loss") == LOSS_ELBO_GAUSSIAN
    noise = next((m for m in dec.modules() if isinstance(m, Gaussian)), None)
    if gaussian and noise is None:
        raise ValueError("training.loss elbo_gaussian needs a decoder ending in a Gaussian layer")
    opt = _optimizer(iter([*enc.parameters(), *dec.parameters()]), training)

    def reconstruction(recon: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        if noise is None or not gaussian:
            return _reconstruction_loss(recon, x, rec_name, sigmoid_out)
        # Gaussian negative log-likelihood per example, summed over values (Kingma & Welling 2014, App.
        # C.2), its log-variance learned: the samples' spread is the data's, not a guess
        log_var = noise.log_variance  # [values]
        error = (recon.reshape(len(x), -1) - x.reshape(len(x), -1)).pow(2)
        return 0.5 * torch.mean(torch.sum(error * torch.exp(-log_var) + log_var, dim=1))

    def run(batch: Batch) -> None:
        x = batch[0]
        opt.zero_grad(set_to_none=True)
        mean, log_var = enc(x).chunk(2, dim=1)  # [B, L] each
        z = mean + torch.randn_like(mean) * torch.exp(
            0.5 * log_var
        )  # reparameterisation (Kingma & Welling 2014)
        recon = dec(z)
        kl = -0.5 * torch.mean(torch.sum(1 + log_var - mean.pow(2) - log_var.exp(), dim=1))
        loss = reconstruction(recon, x) + kl
        _backward(loss)
        opt.step()

    flops = {roles.ENCODER: e_flops, roles.DECODER: d_flops}
    formula = "3 (E + D) (reparameterised ELBO, forward + backward)"
    return TrainingStep(family, nets, run, (x,), flops, 3 * (e_flops + d_flops), formula)


def _rbm_step(
    candidate: Mapping[str, Any], nets: dict[str, nn.Module], dev: torch.device, family: str
) -> TrainingStep:
    io, training = candidate["io"], candidate.get("training") or {}
    model = nets[roles.MODEL]
    rbms = _rbms(model)
    v = _input_draw(io, dev, flat=True)
    flops, _ = probe(model, v.new(2))
    opt = _optimizer(model.parameters(), training)

    def run(batch: Batch) -> None:
        x = batch[0]
        opt.zero_grad(set_to_none=True)
        for rbm in rbms:
            x = cd1_gradients(rbm, x)
        opt.step()

    return TrainingStep(family, nets, run, (v,), {roles.MODEL: flops}, 5 * flops, "5 F (CD-1)")


def _dbn_step(
    candidate: Mapping[str, Any], nets: dict[str, nn.Module], dev: torch.device, family: str
) -> TrainingStep:
    io, training = candidate["io"], candidate.get("training") or {}
    stack, classifier = nets[roles.STACK], nets[roles.CLASSIFIER]
    rbms = _rbms(stack)
    visible = _input_draw(io, dev, flat=True)
    x2 = visible.new(2)
    r_flops, _ = probe(stack, x2)
    c_flops, out_shape = probe(classifier, stack(x2).detach())
    pretrain = _optimizer(stack.parameters(), training)
    finetune = _optimizer(iter([*stack.parameters(), *classifier.parameters()]), training)
    labels = Draw("ids", (), dev, int(io.get("outputs") or out_shape[-1]))

    def run(batch: Batch) -> None:
        v, y = batch
        pretrain.zero_grad(set_to_none=True)
        h = v
        for rbm in rbms:
            h = cd1_gradients(rbm, h)
        pretrain.step()
        finetune.zero_grad(set_to_none=True)
        loss = F.cross_entropy(classifier(stack(v)), y)
        _backward(loss)
        finetune.step()

    return TrainingStep(
        family,
        nets,
        run,
        (visible, labels),
        {roles.STACK: r_flops, roles.CLASSIFIER: c_flops},
        8 * r_flops + 3 * c_flops,
        "8 R + 3 C (CD-1 on every RBM, then one fine-tuning step)",
        ["one dbn step = one pretraining batch on every RBM plus one fine-tuning batch"],
    )


# The torch step of each way of training (advisor/engine/families/family.py), the one table the calibration
# keys by the registry's names; the engine's memory replay and cost model follow the same steps.
STEPS: dict[Step, Callable[[Mapping[str, Any], dict[str, nn.Module], torch.device, str], TrainingStep]] = {
    BACKPROP: _backprop_step,
    ADVERSARIAL: _gan_step,
    VARIATIONAL: _vae_step,
    CONTRASTIVE: _rbm_step,
    PRETRAINED: _dbn_step,
}
