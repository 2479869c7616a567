"""Building every family and running its training step for real (tiny networks)."""

from __future__ import annotations

import copy

import pytest
import torch

from advisor.calibration import build, make_step
from advisor.calibration.layers import RBM, UnknownLayerError, build_layer
from advisor.engine.families import KEYS
from tests.calibration import candidates as C


def _params(nets: dict[str, torch.nn.Module]) -> dict[str, torch.Tensor]:
    return {f"{k}.{n}": p.detach().clone() for k, net in nets.items() for n, p in net.named_parameters()}


def test_every_family_of_the_registry_has_a_hand_written_candidate() -> None:
    assert set(C.ALL_FAMILIES) == set(KEYS)


@pytest.mark.parametrize("family", sorted(C.ALL_FAMILIES))
def test_it_runs_a_real_training_step_that_changes_every_network(family: str) -> None:
    torch.manual_seed(0)
    step = make_step(C.ALL_FAMILIES[family](), "cpu")
    before = _params(step.nets)
    batch = step.make_batch(8)
    step.run(batch)
    after = _params(step.nets)
    for key in step.nets:
        changed = [n for n in before if n.startswith(key + ".") and not torch.equal(before[n], after[n])]
        assert changed, f"{family}: the step left network {key!r} untouched"
    assert step.step_flops_per_example > 0


def test_the_gaussian_vae_learns_its_decoders_variance_and_samples_with_it() -> None:
    from advisor.calibration.layers import Gaussian
    from advisor.probe.learning.generation import generate

    torch.manual_seed(0)
    candidate = C.vae_gaussian()
    step = make_step(candidate, "cpu")
    (noise,) = [m for m in step.nets["decoder"].modules() if isinstance(m, Gaussian)]
    start = torch.full((6,), -2.0)  # variance 0.14 to start: under a standardised value's 1
    assert torch.equal(noise.log_variance, start)
    batch = step.make_batch(16)
    for _ in range(5):
        step.refill(batch)
        step.run(batch)
    assert not torch.equal(noise.log_variance, start)  # the likelihood moved it
    samples = generate(candidate, step.nets, 200, seed=0)
    means = step.nets["decoder"](torch.randn(200, 3)).detach()
    assert samples.shape == (200, 6)
    # the samples scatter around the decoder's means by its learned variance, not around nothing
    spread = float(torch.from_numpy(samples).std(dim=0).mean())
    assert spread > float(means.std(dim=0).mean())
    with pytest.raises(ValueError, match="Gaussian layer"):
        make_step(
            {
                **candidate,
                "networks": {**candidate["networks"], "decoder": candidate["networks"]["decoder"][:-1]},
            },
            "cpu",
        )


@pytest.mark.parametrize(
    ("family", "keys"),
    [
        ("ffn", {"model"}),
        ("gan", {"generator", "discriminator"}),
        ("vae", {"encoder", "decoder"}),
        ("dbn", {"rbm", "classifier"}),
        ("rbm", {"model"}),
    ],
)
def test_it_builds_one_module_per_network_key(family: str, keys: set[str]) -> None:
    assert set(build(C.ALL_FAMILIES[family]())) == keys


def test_it_counts_rbm_parameters_as_the_contract_says() -> None:
    nets = build(C.rbm())
    (rbm,) = [m for m in nets["model"].modules() if isinstance(m, RBM)]
    assert sum(p.numel() for p in nets["model"].parameters()) == 36 * 12 + 36 + 12
    assert rbm(torch.rand(5, 36)).shape == (5, 12)


def test_it_draws_weights_uniform_within_init_scale_and_zeroes_biases() -> None:
    cand = C.cnn()
    cand["training"]["init_scale"] = 0.05
    net = build(cand)["model"]
    conv, bn = net[0], net[1]
    assert conv.weight.abs().max() <= 0.05
    assert conv.weight.abs().max() > 0.04  # drawn across the whole range, not left at torch's default
    assert torch.count_nonzero(conv.bias) == 0
    assert torch.all(bn.weight == 1)  # a normalisation scale stays one


@pytest.mark.parametrize(
    ("fan_in", "bound"),
    [(4, 0.1), (100, 0.1), (400, 0.05), (896, 896**-0.5)],  # ±0.1, never wider than ±1/sqrt(fan-in)
)
def test_it_caps_the_small_draw_by_the_fan_in(fan_in: int, bound: float) -> None:
    cand = C.ffn(features=fan_in)
    cand["training"].update(init_scale=0.1, init="uniform_fan_in")
    first = build(cand)["model"][0]
    assert first.weight.shape[1] == fan_in
    assert first.weight.abs().max() <= bound
    assert first.weight.abs().max() > 0.8 * bound


def test_it_keeps_torch_defaults_without_init_scale() -> None:
    cand = C.ffn(features=4)
    cand["training"]["init_scale"] = None
    first = build(cand)["model"][0]
    assert torch.count_nonzero(first.bias) > 0  # torch's default init draws biases too


def test_it_drops_the_recurrent_hidden_state_and_keeps_per_step_logits() -> None:
    net = build(C.lstm_tokens())["model"]
    out = net(torch.randint(30, (3, 6)))
    assert out.shape == (3, 6, 30)
    last = build(C.rnn("GRU"))["model"]
    assert last(torch.rand(3, 7, 5)).shape == (3, 4)


def test_it_counts_forward_flops_like_torch_flop_counter() -> None:
    from torch.utils.flop_counter import FlopCounterMode

    for make in (C.cnn, C.dn, C.ffn):
        cand = make()
        step = make_step(cand, "cpu")
        net = step.nets["model"].eval()
        x = step.make_batch(4)[0]
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            net(x)
        assert step.forward_flops["model"] == pytest.approx(counter.get_total_flops() / 4, rel=0.01)


def test_it_rejects_an_unknown_layer_kind_by_name() -> None:
    cand = copy.deepcopy(C.ffn())
    cand["networks"]["model"][1] = C.L("Sigmoidish")
    with pytest.raises(UnknownLayerError, match="Sigmoidish"):
        build(cand)


def test_a_causal_convolution_keeps_the_length_and_never_looks_ahead() -> None:
    torch.manual_seed(0)
    layer = {
        "kind": "CausalConv1d",
        "args": {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "dilation": 2},
    }
    conv = build_layer(layer)
    x = torch.rand(2, 20, 4)
    changed = x.clone()
    changed[:, 12:] = torch.rand(2, 8, 4)
    y, y_changed = conv(x), conv(changed)
    assert y.shape == (2, 20, 6) and y.is_contiguous()  # steps first, as LastStep and Linear read it
    assert torch.allclose(y[:, :12], y_changed[:, :12]) and not torch.allclose(y[:, 12:], y_changed[:, 12:])
    # step t sees steps t - 4, t - 2 and t: Conv1d over the sequence padded by (3 - 1) * 2 on the left
    padded = torch.nn.functional.pad(x.transpose(1, 2), (4, 0))
    reference = torch.nn.functional.conv1d(padded, conv.weight, conv.bias, dilation=2).transpose(1, 2)
    assert torch.allclose(y, reference, atol=1e-6)
