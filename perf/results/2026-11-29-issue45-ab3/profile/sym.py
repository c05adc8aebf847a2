import subprocess, json, re, sys, collections
def load(run):
    us = list(json.load(open(run+'.json'))['backends'].values())[0]['cpu_us_per_req']
    out = subprocess.run(['perf','report','-i',run+'.data','--no-children','--sort','symbol','--stdio','-F','overhead,sym'],capture_output=True,text=True).stdout
    agg = collections.Counter()
    for line in out.splitlines():
        m = re.match(r'\s+([\d.]+)%\s+\[.\]\s+(.*?)\s*$', line)
        if m: agg[m.group(2)[:110]] += float(m.group(1))/100*us*1000
    return agg
A=[load(r) for r in sys.argv[1].split(',')]; B=[load(r) for r in sys.argv[2].split(',')]
def avg(L,k): return sum(x[k] for x in L)/len(L)
keys = {k for x in A+B for k in x}
rows = sorted(((avg(B,k)-avg(A,k), avg(A,k), avg(B,k), k) for k in keys), key=lambda r: -abs(r[0]))
for d,a,b,k in rows[:30]: print(f'{d:+7.1f} {a:7.1f} {b:7.1f}  {k}')
