import sys, json
from advisor.engine import normalise
from advisor.engine.candidate import to_candidate
from advisor.engine.families import temporal, recurrent, LSTM, GRU
from advisor.calibration import measure
steps, feats = int(sys.argv[1]), int(sys.argv[2])
spec = normalise({'task':'sequence','data':{'examples':5000,'input_shape':[steps,feats],'outputs':4},'hardware':{'cpu_cores':2,'ram_gb':8},'target':{'accuracy':0.9}})
for item in sys.argv[3].split(','):
    fam, _, w = item.partition(':'); w = int(w)
    d = temporal._tcn(spec, w) if fam == 'tcn' else recurrent._recurrent(spec, {'lstm': LSTM, 'gru': GRU}[fam], w)
    c = to_candidate(d, spec)
    m = measure(c, batch_size=128, threads=1, min_iterations=5, min_seconds=1.0)
    print(item, c['parameters'], round(c['flops_per_example']/1e6,1), 'MFLOP', round(m['seconds_per_batch']*1e3,1), 'ms', flush=True)
