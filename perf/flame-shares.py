#!/usr/bin/env python3
"""Shares of a folded-stack profile (as `doppio run --flamegraph PREFIX` writes beside each
SVG: PREFIX-<driver>.folded): the inclusive share of every frame that contains one of the
given patterns, and the 25 heaviest leaf frames.

    perf/flame-shares.py PREFIX-doppio.folded io_uring_enter sendto memcpy clock_gettime
"""
import sys,collections
f=sys.argv[1]
tot=0; leaf=collections.Counter(); incl=collections.Counter()
pats=sys.argv[2:]
for line in open(f):
    stack,n=line.rsplit(' ',1); n=int(n); tot+=n
    frames=stack.split(';')
    leaf[frames[-1]]+=n
    seen=set()
    for p in pats:
        if any(p in fr for fr in frames) and p not in seen:
            incl[p]+=n; seen.add(p)
print(f"total {tot} samples (ns of cpu-clock)")
for p in pats: print(f"  incl {p}: {incl[p]/tot:.1%}")
print("top leaves:")
for k,v in leaf.most_common(25): print(f"  {v/tot:6.1%} {k[:120]}")
