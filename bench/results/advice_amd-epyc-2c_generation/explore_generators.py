"""Exploration: GAN/VAE recipes on the 8-Gaussian ring, C2ST score (advisor.probe.learning.generation)."""
import sys, json, math, copy, time
import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
from bench.advice_gen import draw, modes
from advisor.probe.learning.generation import two_sample_score
torch.set_num_threads(1)

def mlp(sizes, act, last=None):
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(act())
    if last: layers.append(last())
    return nn.Sequential(*layers)

def init_(net, scale=0.1):
    for m in net.modules():
        if isinstance(m, nn.Linear):
            b = min(scale, 1 / math.sqrt(m.in_features))
            nn.init.uniform_(m.weight, -b, b); nn.init.uniform_(m.bias, -b, b)

def run(cfg, seed):
    rng = np.random.default_rng(2000 + seed)
    x = draw(4000, rng); xt, xv, xtr = x[:800], x[800:1600], x[1600:]
    torch.manual_seed(seed)
    h, depth, latent = cfg.get('h', 64), cfg.get('depth', 1), cfg.get('latent', 2)
    batch = cfg.get('batch', 64)
    updates = cfg.get('epochs', 100) * math.ceil(4000 / batch)
    data = torch.from_numpy(xtr); n = len(data)
    kind = cfg.get('kind', 'gan')
    if kind == 'gan':
        dh = cfg.get('dh', h)
        G = mlp([latent] + [h] * depth + [2], nn.ReLU); D = mlp([2 * cfg.get('pack', 1)] + [dh] * cfg.get('ddepth', depth) + [1], lambda: nn.LeakyReLU(0.2))
        init_(G); init_(D)
        if cfg.get('gnoise'):
            class Noise(nn.Module):
                def __init__(self):
                    super().__init__(); self.log_variance = nn.Parameter(torch.full((2,), float(cfg.get('gnoise_init', 0.0))))
                def forward(self, x):
                    return x + torch.exp(0.5 * self.log_variance) * torch.randn_like(x)
            G = nn.Sequential(*G, Noise())
        og = torch.optim.Adam(G.parameters(), lr=cfg.get('glr', 1e-3), betas=tuple(cfg.get('gb', (0.9, 0.999))))
        od = torch.optim.Adam(D.parameters(), lr=cfg.get('dlr', 1e-3), betas=tuple(cfg.get('db', (0.9, 0.999))))
        def sample(m):
            with torch.no_grad(): return G(torch.randn(m, latent)).numpy()
    else:
        hetero = cfg.get('hetero')
        E = mlp([2] + [h] * depth + [2 * latent], nn.ReLU); Dd = mlp([latent] + [h] * depth + [4 if hetero else 2], nn.ReLU)
        init_(E); init_(Dd)
        opt = torch.optim.Adam([*E.parameters(), *Dd.parameters()], lr=cfg.get('lr', 1e-3))
        beta = cfg.get('beta', 1.0); state = {}
        logvar_x = torch.zeros(1, requires_grad=True) if cfg.get('learn_var') else None
        if logvar_x is not None: opt.add_param_group({'params': [logvar_x]})
        def sample(m):
            with torch.no_grad():
                mu = Dd(torch.randn(m, latent))
                if cfg.get('calibrated'):
                    # the calibrated variance: the reconstruction error on held-out data (validation)
                    xv_t = torch.from_numpy(xv); mv, lv_ = E(xv_t).chunk(2, 1)
                    s2 = float(F.mse_loss(Dd(mv + torch.randn_like(mv) * torch.exp(0.5 * lv_)), xv_t))
                    return (mu + math.sqrt(s2) * torch.randn_like(mu)).numpy()
                if hetero:
                    mu, lvx = mu.chunk(2, 1)
                    return (mu + torch.exp(0.5 * lvx) * torch.randn_like(mu)).numpy()
                if cfg.get('noise'):
                    sd = math.sqrt(cfg.get('noise')) if logvar_x is None else torch.exp(0.5 * logvar_x)
                    mu = mu + sd * torch.randn_like(mu)
                return mu.numpy()
    g = torch.Generator().manual_seed(seed)
    best, curve = {'val': -1}, []
    done, epoch = 0, 0
    t0 = time.process_time()
    pack = cfg.get('pack', 1); dsteps = cfg.get('dsteps', 1)
    while done < updates:
        epoch += 1
        order = torch.randperm(n, generator=g)
        for s in range(0, n - batch * pack * (dsteps if kind=='gan' else 1) + 1, batch * pack * (dsteps if kind=='gan' else 1)):
            if kind == 'gan':
                for k in range(dsteps):
                    real = data[order[s + k*batch*pack: s + (k+1)*batch*pack]].reshape(batch, 2 * pack)
                    fake = G(torch.randn(batch * pack, latent)).reshape(batch, 2 * pack)
                    od.zero_grad()
                    loss = cfg.get('loss', 'gan')
                    if loss == 'r1':
                        real.requires_grad_(True)
                    dr, df = D(real), D(fake.detach())
                    if loss == 'wgan-gp':
                        eps = torch.rand(batch, 1)
                        mix = (eps * real + (1 - eps) * fake.detach()).requires_grad_(True)
                        gr, = torch.autograd.grad(D(mix).sum(), mix, create_graph=True)
                        ld = df.mean() - dr.mean() + cfg.get('gp', 10) * ((gr.norm(dim=1) - 1) ** 2).mean()
                    else:
                        ld = F.binary_cross_entropy_with_logits(dr, torch.full_like(dr, cfg.get('smooth', 1.0))) + F.binary_cross_entropy_with_logits(df, torch.zeros_like(df))
                        if loss == 'r1':
                            gr, = torch.autograd.grad(dr.sum(), real, create_graph=True)
                            ld = ld + cfg.get('gamma', 1.0) / 2 * gr.pow(2).sum(1).mean()
                    ld.backward(); od.step()
                og.zero_grad()
                fake = G(torch.randn(batch * pack, latent)).reshape(batch, 2 * pack)
                dg = D(fake)
                lg = -dg.mean() if cfg.get('loss') == 'wgan-gp' else F.binary_cross_entropy_with_logits(dg, torch.ones_like(dg))
                lg.backward(); og.step()
            else:
                xb = data[order[s:s+batch]]
                opt.zero_grad()
                mu, lv = E(xb).chunk(2, 1)
                z = mu + torch.randn_like(mu) * torch.exp(0.5 * lv)
                rec = Dd(z)
                if cfg.get('calibrated'):
                    mse = F.mse_loss(rec, xb)
                    nll = 0.5 * xb.shape[1] * torch.log(mse)
                    state['mse'] = float(mse)
                elif hetero:
                    rec, lvx = rec.chunk(2, 1)
                    nll = 0.5 * (((rec - xb) ** 2) / torch.exp(lvx) + lvx).sum(1).mean()
                elif logvar_x is not None:
                    nll = 0.5 * (((rec - xb) ** 2) / torch.exp(logvar_x) + logvar_x).sum(1).mean()
                else:
                    nll = F.mse_loss(rec, xb, reduction='none').sum(1).mean() / (2 * cfg.get('sigma2', 0.5))
                kl = -0.5 * torch.mean(torch.sum(1 + lv - mu.pow(2) - lv.exp(), 1))
                (nll + beta * kl).backward(); opt.step()
            done += 1
            if cfg.get('decay'):
                f = 1 - done / updates
                for o in ([og, od] if kind == 'gan' else [opt]):
                    for g_ in o.param_groups: g_['lr'] = g_.setdefault('initial_lr', g_['lr']) * f
            if done >= updates: break
        if epoch % 5 == 0 or done >= updates:
            val = two_sample_score(xv, sample(800), seed=seed)
            curve.append(round(val, 3))
            if val > best['val']:
                best = {'val': val, 'epoch': epoch, 'state': copy.deepcopy((G if kind=='gan' else Dd).state_dict())}
    (G if kind=='gan' else Dd).load_state_dict(best['state'])
    fake = sample(800)
    from bench.advice_gen import centres
    d = np.sqrt(((fake[:, None, :] - centres()[None]) ** 2).sum(axis=2)); near = d.min(1) <= 0.3; k = d.argmin(1)
    counts = np.bincount(k[near], minlength=8).tolist()
    spread = [round(float(np.sqrt(((fake[near & (k == j)] - centres()[j]) ** 2).sum(1).mean() / 2)), 3) if (near & (k == j)).sum() > 2 else None for j in range(8)]
    return {'score': round(two_sample_score(xt, fake, seed=seed), 3), **modes(fake), 'counts': counts, 'sd': spread, 'best_epoch': best['epoch'], 'epochs': epoch, 'cpu': round(time.process_time() - t0, 1), 'curve': curve[::4]}

cfgs = json.loads(sys.argv[1]); seeds = [int(s) for s in sys.argv[2].split(',')]
for name, cfg in cfgs.items():
    for seed in seeds:
        r = run(cfg, seed)
        print(json.dumps({'name': name, 'seed': seed, **r}), flush=True)
