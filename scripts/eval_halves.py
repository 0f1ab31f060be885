#!/usr/bin/env python3
"""Means of a `corrtrack eval --json` file by the data set's halves.

    scripts/eval_halves.py eval.json [--data ../shared/data] [--csrt]

The tune and check halves are the lists in the data set's README ("**Tune** ...",
"**Check** ..."); "new" is the 15 sequences added on 2026-12-04 (the rows after the first 17
of its reference table). --csrt prints OpenCV CSRT's numbers from that table beside ours.
Means are of the per-sequence AUC and P@20, as `corrtrack eval` prints them.
"""
import argparse
import json
import pathlib
import re
import statistics


def halves(readme):
    text = readme.read_text()
    tune = re.search(r"\*\*Tune\*\*[^:]*:\s*([^.]*)\.", text).group(1)
    check = re.search(r"\*\*Check\*\*[^:]*:\s*([^.]*)\.", text).group(1)
    split = lambda s: [n.strip() for n in s.split(",") if n.strip()]
    csrt, order = {}, []
    for m in re.finditer(r"^\| (\w+) \|(.*)\|$", text, re.M):
        cells = [c.strip() for c in m.group(2).split("|")]
        if len(cells) == 4 and "/" in cells[3]:
            a, p, _ = [float(v) for v in cells[3].split("/")]
            csrt[m.group(1)] = (a, p)
            order.append(m.group(1))
    return split(tune), split(check), order[17:], csrt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--data", default=str(pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--csrt", action="store_true")
    a = ap.parse_args()
    tune, check, new, csrt = halves(pathlib.Path(a.data) / "README.md")
    seqs = json.load(open(a.json))["sequences"]
    sets = [("tune", tune), ("check", check), ("new 15", new), ("all", sorted(seqs))]
    for label, names in sets:
        have = [n for n in names if n in seqs and "auc" in seqs[n]]
        if not have:
            continue
        auc = statistics.mean(seqs[n]["auc"] for n in have)
        p20 = statistics.mean(seqs[n]["prec20"] for n in have)
        line = f"{label:7s} ({len(have):2d}) {auc:.3f} / {p20:.3f}"
        if a.csrt and all(n in csrt for n in have):
            line += "   CSRT %.3f / %.3f" % (statistics.mean(csrt[n][0] for n in have),
                                           statistics.mean(csrt[n][1] for n in have))
        print(line)


if __name__ == "__main__":
    main()
