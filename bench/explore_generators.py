"""`python -m bench explore generators CONFIGS`: generator set-ups on bench advice's 8-Gaussian ring, scored
by the product's two-sample test (advisor.probe.learning.generation), one JSON row per (set-up, seed) with
the modes, the share near a mode, per-mode counts and spread. Not the product's loop: its own, small and
explicit, to try what a candidate cannot state yet (TTUR rates, penalties, packing, learned variances). How
the vector-generation rule was chosen: bench/results/advice_amd-epyc-2c_generation/README.md.

CONFIGS is a JSON object of named set-ups, e.g. `'{"name": {"kind": "vae", "learn_var": true, "noise": 1,
"h": 128, "depth": 2, "latent": 4, "epochs": 400}}'`.
Keys (defaults): kind gan|vae; h (64) units, depth (1) hidden layers, latent (2), batch (64), epochs (100:
passes over the 4,000 examples the spec declares, as the engine counts them), decay (linear rate decay).
GAN: glr, dlr (1e-3), gb, db (Adam betas), dh, ddepth (discriminator), dsteps (D steps per G step), pack,
smooth (real label), loss gan|r1|wgan-gp (gamma, gp), gnoise (a learned output noise, gnoise_init its
log-variance). VAE: lr, beta (KL weight), learn_var + noise (one learned variance, sampled), hetero (a
variance per value from the decoder), calibrated (sigma-VAE), sigma2 (fixed variance of squared error),
prior (components of a Gaussian mixture fitted to the training codes after training, sampled instead of
the standard normal: ex-post density estimation, Ghosh et al. 2020).
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from advisor.probe.learning.generation import two_sample_score
from bench.advice_gen import centres, draw, modes


def mlp(sizes: list[int], act: Any) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(act())
    return nn.Sequential(*layers)


def init_(net: nn.Module, scale: float = 0.1) -> None:
    for m in net.modules():
        if isinstance(m, nn.Linear):
            bound = min(scale, 1 / math.sqrt(m.in_features))
            nn.init.uniform_(m.weight, -bound, bound)
            nn.init.uniform_(m.bias, -bound, bound)


class Noise(nn.Module):
    """A learned Gaussian output noise for a GAN's generator."""

    def __init__(self, log_variance: float) -> None:
        super().__init__()
        self.log_variance = nn.Parameter(torch.full((2,), log_variance))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.exp(0.5 * self.log_variance) * torch.randn_like(x)


class Gan:
    def __init__(self, cfg: dict[str, Any], h: int, depth: int, latent: int) -> None:
        self.cfg, self.latent, self.pack = cfg, latent, cfg.get("pack", 1)
        self.gen = mlp([latent] + [h] * depth + [2], nn.ReLU)
        dh = cfg.get("dh", h)
        self.disc = mlp([2 * self.pack] + [dh] * cfg.get("ddepth", depth) + [1], lambda: nn.LeakyReLU(0.2))
        init_(self.gen)
        init_(self.disc)
        if cfg.get("gnoise"):
            self.gen = nn.Sequential(*self.gen, Noise(float(cfg.get("gnoise_init", 0.0))))
        self.og = torch.optim.Adam(
            self.gen.parameters(), lr=cfg.get("glr", 1e-3), betas=tuple(cfg.get("gb", (0.9, 0.999)))
        )
        self.od = torch.optim.Adam(
            self.disc.parameters(), lr=cfg.get("dlr", 1e-3), betas=tuple(cfg.get("db", (0.9, 0.999)))
        )
        self.optimizers = [self.og, self.od]
        self.net = self.gen
        self.per_update = cfg.get("dsteps", 1) * self.pack

    def fake(self, batch: int) -> torch.Tensor:
        out: torch.Tensor = self.gen(torch.randn(batch * self.pack, self.latent))
        return out.reshape(batch, 2 * self.pack)

    def update(self, chunk: torch.Tensor, batch: int) -> None:
        cfg, loss = self.cfg, self.cfg.get("loss", "gan")
        for k in range(cfg.get("dsteps", 1)):
            real = chunk[k * batch * self.pack : (k + 1) * batch * self.pack].reshape(batch, 2 * self.pack)
            fake = self.fake(batch).detach()
            self.od.zero_grad()
            if loss == "r1":
                real.requires_grad_(True)
            dr, df = self.disc(real), self.disc(fake)
            if loss == "wgan-gp":
                eps = torch.rand(batch, 1)
                mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
                (grad,) = torch.autograd.grad(self.disc(mix).sum(), mix, create_graph=True)
                penalty = ((grad.norm(dim=1) - 1) ** 2).mean()
                d_loss = df.mean() - dr.mean() + cfg.get("gp", 10) * penalty
            else:
                real_label = torch.full_like(dr, cfg.get("smooth", 1.0))
                d_loss = F.binary_cross_entropy_with_logits(dr, real_label)
                d_loss = d_loss + F.binary_cross_entropy_with_logits(df, torch.zeros_like(df))
                if loss == "r1":
                    (grad,) = torch.autograd.grad(dr.sum(), real, create_graph=True)
                    d_loss = d_loss + cfg.get("gamma", 1.0) / 2 * grad.pow(2).sum(1).mean()
            d_loss.backward()
            self.od.step()
        self.og.zero_grad()
        dg = self.disc(self.fake(batch))
        ones = torch.ones_like(dg)
        g_loss = -dg.mean() if loss == "wgan-gp" else F.binary_cross_entropy_with_logits(dg, ones)
        g_loss.backward()
        self.og.step()

    def sample(self, m: int, x_val: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return np.asarray(self.gen(torch.randn(m, self.latent)).numpy())


class Vae:
    def __init__(self, cfg: dict[str, Any], h: int, depth: int, latent: int) -> None:
        self.cfg, self.latent, self.per_update = cfg, latent, 1
        self.enc = mlp([2] + [h] * depth + [2 * latent], nn.ReLU)
        self.dec = mlp([latent] + [h] * depth + [4 if cfg.get("hetero") else 2], nn.ReLU)
        init_(self.enc)
        init_(self.dec)
        self.opt = torch.optim.Adam([*self.enc.parameters(), *self.dec.parameters()], lr=cfg.get("lr", 1e-3))
        self.log_var = torch.zeros(1, requires_grad=True) if cfg.get("learn_var") else None
        if self.log_var is not None:
            self.opt.add_param_group({"params": [self.log_var]})
        self.optimizers = [self.opt]
        # a prior fitted to the training codes after training (ex-post density estimation, Ghosh et al.
        # 2020): a mixture of `prior` Gaussians on the encoder's means; the encoder is then kept with the
        # decoder at the best epoch
        self.prior_components = int(cfg.get("prior", 0))
        self.codes: torch.Tensor | None = None
        self.net: nn.Module = nn.ModuleList([self.enc, self.dec]) if self.prior_components else self.dec

    def update(self, xb: torch.Tensor, batch: int) -> None:
        cfg = self.cfg
        self.opt.zero_grad()
        mu, lv = self.enc(xb).chunk(2, 1)
        rec = self.dec(mu + torch.randn_like(mu) * torch.exp(0.5 * lv))
        if cfg.get("calibrated"):  # sigma-VAE: the variance at its optimum, the squared error
            nll = 0.5 * xb.shape[1] * torch.log(F.mse_loss(rec, xb))
        elif cfg.get("hetero"):
            rec, lvx = rec.chunk(2, 1)
            nll = 0.5 * (((rec - xb) ** 2) / torch.exp(lvx) + lvx).sum(1).mean()
        elif self.log_var is not None:
            nll = 0.5 * (((rec - xb) ** 2) / torch.exp(self.log_var) + self.log_var).sum(1).mean()
        else:
            nll = F.mse_loss(rec, xb, reduction="none").sum(1).mean() / (2 * cfg.get("sigma2", 0.5))
        kl = -0.5 * torch.mean(torch.sum(1 + lv - mu.pow(2) - lv.exp(), 1))
        (nll + cfg.get("beta", 1.0) * kl).backward()
        self.opt.step()

    def latent_draw(self, m: int) -> torch.Tensor:
        if not self.prior_components or self.codes is None:
            return torch.randn(m, self.latent)
        from sklearn.mixture import GaussianMixture

        with torch.no_grad():
            means = self.enc(self.codes).chunk(2, 1)[0].numpy()
        mixture = GaussianMixture(self.prior_components, covariance_type="full", random_state=0).fit(means)
        return torch.from_numpy(mixture.sample(m)[0].astype(np.float32))

    def sample(self, m: int, x_val: np.ndarray) -> np.ndarray:
        cfg = self.cfg
        with torch.no_grad():
            mu = self.dec(self.latent_draw(m))
            if cfg.get("calibrated"):  # the variance: the reconstruction error on the validation split
                xv = torch.from_numpy(x_val)
                mv, lv = self.enc(xv).chunk(2, 1)
                s2 = float(F.mse_loss(self.dec(mv + torch.randn_like(mv) * torch.exp(0.5 * lv)), xv))
                return np.asarray((mu + math.sqrt(s2) * torch.randn_like(mu)).numpy())
            if cfg.get("hetero"):
                mu, lvx = mu.chunk(2, 1)
                return np.asarray((mu + torch.exp(0.5 * lvx) * torch.randn_like(mu)).numpy())
            if cfg.get("noise"):
                sd = torch.exp(0.5 * self.log_var) if self.log_var is not None else math.sqrt(cfg["noise"])
                mu = mu + sd * torch.randn_like(mu)
            return np.asarray(mu.numpy())


def describe(fake: np.ndarray) -> dict[str, Any]:
    """Per-mode counts and spread (per dimension) of the samples within 0.3 of a mode."""
    d = np.sqrt(((fake[:, None, :] - centres()[None]) ** 2).sum(axis=2))
    near, nearest = d.min(1) <= 0.3, d.argmin(1)
    spread = []
    for j in range(8):
        mine = fake[near & (nearest == j)]
        spread.append(
            round(float(np.sqrt(((mine - centres()[j]) ** 2).sum(1).mean() / 2)), 3)
            if len(mine) > 2
            else None
        )
    return {"counts": np.bincount(nearest[near], minlength=8).tolist(), "sd": spread}


def run(cfg: dict[str, Any], seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(2000 + seed)  # bench.advice_gen.evaluate's data and splits
    x = draw(4000, rng)
    x_test, x_val, x_train = x[:800], x[800:1600], x[1600:]
    torch.manual_seed(seed)
    h, depth, latent, batch = (
        cfg.get("h", 64),
        cfg.get("depth", 1),
        cfg.get("latent", 2),
        cfg.get("batch", 64),
    )
    model = (Gan if cfg.get("kind", "gan") == "gan" else Vae)(cfg, h, depth, latent)
    updates = cfg.get("epochs", 100) * math.ceil(4000 / batch)
    data, n = torch.from_numpy(x_train), len(x_train)
    if isinstance(model, Vae):
        model.codes = data  # what a fitted prior is fitted to: the training split's codes
    order_draw = torch.Generator().manual_seed(seed)
    best: dict[str, Any] = {"val": -1.0}
    curve, done, epoch, started = [], 0, 0, time.process_time()
    chunk = batch * model.per_update
    while done < updates:
        epoch += 1
        order = torch.randperm(n, generator=order_draw)
        for start in range(0, n - chunk + 1, chunk):
            model.update(data[order[start : start + chunk]], batch)
            done += 1
            if cfg.get("decay"):
                for opt in model.optimizers:
                    for group in opt.param_groups:
                        group["lr"] = group.setdefault("initial_lr", group["lr"]) * (1 - done / updates)
            if done >= updates:
                break
        if epoch % 5 == 0 or done >= updates:
            val = two_sample_score(x_val, model.sample(800, x_val), seed=seed)
            curve.append(round(val, 3))
            if val > best["val"]:
                best = {"val": val, "epoch": epoch, "state": copy.deepcopy(model.net.state_dict())}
    model.net.load_state_dict(best["state"])
    fake = model.sample(800, x_val)
    return {
        "score": round(two_sample_score(x_test, fake, seed=seed), 3),
        **modes(fake),
        **describe(fake),
        "best_epoch": best["epoch"],
        "epochs": epoch,
        "cpu": round(time.process_time() - started, 1),
        "curve": curve[::4],
    }
