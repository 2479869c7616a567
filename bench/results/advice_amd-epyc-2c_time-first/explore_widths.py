"""CPU seconds to the target per candidate (exploration): family:width list."""
import sys, json, time, copy
import torch
from bench.advice_data import dataset
from advisor.engine import recommend, normalise
from advisor.engine.candidate import to_candidate
from advisor.engine.families import temporal, recurrent, LSTM, GRU
from advisor.probe.learning import data, train, curve
torch.set_num_threads(1)
name = sys.argv[1]; items = sys.argv[2].split(',')
seeds = [int(s) for s in (sys.argv[3] if len(sys.argv) > 3 else '0').split(',')]
for seed in seeds:
    sample, spec, best = dataset(name, seed)
    rec = recommend(spec); clean = rec['spec']
    target = spec['target']['accuracy']
    split = data.split(sample, goal=clean['goal'], seed=seed, scale=not spec['data'].get('vocab_size'))
    train.train(rec['candidates'][-1], split, seed=seed, max_epochs=1, budget_s=60)
    for item in items:
        item0, _, bs = item.partition('@')
        fam, _, w = item0.partition(':'); w = int(w) if w else None
        if fam == 'tcn':
            d = temporal._tcn(clean, w) if w else temporal.tcn(clean)
        else:
            d = recurrent._recurrent(clean, {'lstm': LSTM, 'gru': GRU}[fam], w) if w else recurrent.recurrent(clean, {'lstm': LSTM, 'gru': GRU}[fam])
        c = to_candidate(d, clean)
        if bs: c['training']['batch_size'] = int(bs)
        run = train.train(c, split, seed=seed, full_examples=spec['data']['examples'], budget_s=400, clock=time.process_time)
        hit = curve.epochs_to_target(run, target)
        ep = hit['epoch'] if hit and hit['reached'] else None
        print(json.dumps({'data': name, 'seed': seed, 'item': item, 'params': c['parameters'], 'score': run['score'], 'best_epoch': run['best_epoch'], 'epochs': len(run['epochs']),
              'cpu_total': run['epochs'][-1]['seconds'], 'ttt_epoch': ep, 'ttt_cpu': run['epochs'][ep-1]['seconds'] if ep else None,
              'per_epoch_train': run['epochs'][-1]['train_seconds']/len(run['epochs']), 'stopped': run['stopped']}), flush=True)
