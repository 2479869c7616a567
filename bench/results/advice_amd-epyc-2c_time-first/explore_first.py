"""CPU seconds to the target per candidate (exploration)."""
import sys, json, time, copy
import torch
from bench.advice_data import dataset, widen
from advisor.engine import recommend
from advisor.probe.learning import data, train, curve
torch.set_num_threads(1)
name = sys.argv[1]; fams = sys.argv[2].split(','); widths = [float(w) for w in sys.argv[3].split(',')]
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
sample, spec, best = dataset(name, seed)
rec = recommend(spec)
target = spec['target']['accuracy']
split = data.split(sample, goal=rec['spec']['goal'], seed=seed, scale=not spec['data'].get('vocab_size'))
by = {c['family']: c for c in rec['candidates']}
train.train(rec['candidates'][-1], split, seed=seed, max_epochs=1, budget_s=60)
for fam in fams:
    for w in widths:
        c = by[fam] if w == 1 else widen(by[fam], w)
        c = copy.deepcopy(c)
        run = train.train(c, split, seed=seed, full_examples=spec['data']['examples'], budget_s=400, clock=time.process_time)
        hit = curve.epochs_to_target(run, target)
        ep = hit['epoch'] if hit and hit['reached'] else None
        print(json.dumps({'data': name, 'fam': fam, 'w': w, 'score': run['score'], 'best_epoch': run['best_epoch'], 'epochs': len(run['epochs']),
              'cpu_total': run['epochs'][-1]['seconds'], 'ttt_epoch': ep, 'ttt_cpu': run['epochs'][ep-1]['seconds'] if ep else None, 'stopped': run['stopped']}), flush=True)
