import subprocess, json, re, sys, collections
def crate(dso, sym):
    if dso.startswith('[kernel'): return 'kernel'
    if 'libc' in dso: return 'libc'
    if dso.startswith('[vdso'): return 'vdso'
    m = re.search(r'(doppio_bench|doppio_driver|doppio_proto|doppio_rt|hdrhistogram|bytes|glommio|core|alloc|std|io_uring|futures)', sym)
    return m.group(1) if m else 'other'
res = {}
for run in sys.argv[1:]:
    cpu = json.load(open(run+'.json'))
    be = list(cpu['backends'].values())[0]
    us = be['cpu_us_per_req']
    out = subprocess.run(['perf','report','-i',run+'.data','--no-children','--sort','dso,symbol','--stdio','-F','overhead,dso,sym'],capture_output=True,text=True).stdout
    agg = collections.Counter()
    for line in out.splitlines():
        m = re.match(r'\s+([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*)', line)
        if not m: continue
        agg[crate(m.group(2), m.group(3))] += float(m.group(1))/100*us*1000
    res[run] = (us, agg)
keys = sorted({k for _,a in res.values() for k in a}, key=lambda k: -res[sys.argv[1]][1][k])
print('ns/req'.ljust(14), ' '.join(r[:16].rjust(17) for r in sys.argv[1:]))
for k in keys:
    print(k.ljust(14), ' '.join(f'{res[r][1][k]:17.1f}' for r in sys.argv[1:]))
print('total'.ljust(14), ' '.join(f'{res[r][0]*1000:17.1f}' for r in sys.argv[1:]))
