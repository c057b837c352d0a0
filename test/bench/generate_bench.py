#!/usr/bin/env python3
"""Changed-environment detection of `envgate generate` next to `git diff
--name-only` piped into awk, on a generated repository of 50,000 files, 5,000
commits and 200 environments (generate_bench_repo.py; cached in --cache-dir).

For each base..head range (1, 10, 100 commits and the whole history) it times,
interleaved, --runs times each (after one warm-up run):
  envgate generate   the command end to end (config, diff, match, child YAML)
  envgate detect     generate_bench --list: config, libgit2 diff, glob matching,
                     print the affected environments (the same code as generate)
  git + awk (peer)   git diff --name-only --no-renames BASE HEAD | awk with one
                     regular expression per environment (its globs translated),
                     stopping once every environment has matched
and checks that all three name the same environments (a mismatch fails loudly,
exit 1). Then the in-process phases (generate_bench --runs) and the YAML time for
200 environments (every environment changed). Prints a Markdown table.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate_bench_repo  # noqa: E402


def glob_to_ere(glob):
    """envgate's glob rules (runner/config/glob.h) as a POSIX ERE, anchored."""
    if glob.startswith("./"):
        glob = glob[2:]
    glob = glob.lstrip("/")
    if glob.endswith("/"):
        glob += "**"
    out = []
    i = 0
    while i < len(glob):
        c = glob[i]
        at_segment_start = i == 0 or glob[i - 1] == "/"
        if glob.startswith("**", i) and at_segment_start:
            if glob.startswith("**/", i):
                out.append("(.*/)?")
                i += 3
                continue
            if i + 2 == len(glob):
                out.append(".+" if i > 0 else ".*")
                i += 2
                continue
        if c == "*":
            while i < len(glob) and glob[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.index("]", i + 2)
            body = glob[i + 1:end]
            if body[0] in "!^":
                body = "^/" + body[1:]
            assert "/" not in body[1:] and "\\" not in body, glob
            out.append("[" + body + "]")
            i = end
        elif c in ".+(){}|$":
            out.append("[" + c + "]")
        else:
            assert c not in "^\\]", glob
            out.append(c)
        i += 1
    return "^" + "".join(out) + "$"


def write_peer(cache_dir):
    """peer.sh REPO BASE HEAD: git diff --name-only piped into one awk program."""
    lines = ["BEGIN {"]
    n = generate_bench_repo.ENVS
    for i in range(n):
        res = "|".join(glob_to_ere(g) for g in generate_bench_repo.env_globs(i))
        lines.append(f'  name[{i + 1}] = "{generate_bench_repo.env_name(i)}"; re[{i + 1}] = "{res}"')
    lines.append(f"  n = {n}; left = n")
    lines.append("}")
    lines.append("{ for (i = 1; i <= n; i++) if (!(i in hit) && $0 ~ re[i]) { hit[i] = 1; left-- }")
    lines.append("  if (left == 0) exit }")
    lines.append("END { for (i = 1; i <= n; i++) if (i in hit) print name[i] }")
    awk_path = os.path.join(cache_dir, "envs.awk")
    with open(awk_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    peer = os.path.join(cache_dir, "peer.sh")
    with open(peer, "w") as f:
        f.write("#!/bin/sh\n# usage: peer.sh REPO BASE HEAD\n")
        f.write(f'git -C "$1" diff --name-only --no-renames "$2" "$3" | awk -f "{awk_path}"\n')
    os.chmod(peer, 0o755)
    return peer


def timed(cmd):
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = (time.perf_counter() - start) * 1000
    if p.returncode != 0:
        sys.exit(f"FAILED ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return elapsed, p


ENV_LINE = re.compile(r"^envgate generate: (\S+): (\d+ changed path|counts as changed)", re.M)


def environments_of(tool, p):
    if tool == "envgate generate":
        return {m[0] for m in ENV_LINE.findall(p.stderr)}
    return set(p.stdout.split())


def phases(bench, config, repo, base, runs, extra=()):
    cmd = [bench, "--config", config, "--runs", str(runs)] + list(extra)
    if base is not None:
        cmd += ["--repo", repo, "--base", base, "--head", "main"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines())}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--envgate", required=True)
    parser.add_argument("--bench", required=True, help="the generate_bench executable")
    parser.add_argument("--cache-dir", default="/tmp/envgate-generate-bench")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    info = generate_bench_repo.ensure_repo(args.cache_dir)
    repo, config, commits = info["repo"], info["config"], info["commits"]
    peer = write_peer(args.cache_dir)
    out = os.path.join(args.cache_dir, "child.yml")
    ranges = [("1 commit", commits[-2]), ("10 commits", commits[-11]),
              ("100 commits", commits[-101]),
              (f"{len(commits) - 1} commits (whole history)", commits[0])]
    tools = {
        "envgate generate": lambda b: [args.envgate, "generate", "--config", config, "--repo",
                                       repo, "--base", b, "--head", "main", "--out", out],
        "envgate detect": lambda b: [args.bench, "--config", config, "--repo", repo, "--base", b,
                                     "--head", "main", "--list"],
        "git + awk": lambda b: ["sh", peer, repo, b, "main"],
    }
    ok = True
    print("| range | changed paths | envs | envgate generate | envgate detect | git + awk "
          "| detect / peer | generate / peer | in-process diff / match / YAML |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, base in ranges:
        times = {t: [] for t in tools}
        found = {}
        for run in range(args.runs + 1):
            for tool, cmd in tools.items():
                ms, p = timed(cmd(base))
                if run > 0:
                    times[tool].append(ms)
                found[tool] = environments_of(tool, p)
        if len({frozenset(s) for s in found.values()}) != 1:
            ok = False
            print(f"!!! MISMATCH for {label}: " + "; ".join(
                f"{t}: {len(s)} envs" for t, s in found.items()), file=sys.stderr)
            ref = found["git + awk"]
            for t, s in found.items():
                print(f"!!!   {t}: extra {sorted(s - ref)[:10]} missing {sorted(ref - s)[:10]}",
                      file=sys.stderr)
        med = {t: statistics.median(v) for t, v in times.items()}
        ph = phases(args.bench, config, repo, base, args.runs)
        print(f"| {label} | {int(ph['changed_paths'])} | {len(found['git + awk'])} "
              f"| {med['envgate generate']:.1f} ms | {med['envgate detect']:.1f} ms "
              f"| {med['git + awk']:.1f} ms | {med['envgate detect'] / med['git + awk']:.2f} "
              f"| {med['envgate generate'] / med['git + awk']:.2f} "
              f"| {ph['diff_ms']:.1f} / {ph['match_ms']:.1f} / {ph['render_ms']:.1f} ms |")
    all_envs = phases(args.bench, config, repo, None, args.runs, ["--all"])
    e2e = []
    for run in range(args.runs + 1):
        ms, p = timed([args.envgate, "generate", "--config", config, "--repo", repo, "--base",
                       "0" * 40, "--default-branch", "no-such-branch", "--out", out])
        if run > 0:
            e2e.append(ms)
    n_all = len(environments_of("envgate generate", p))
    print(f"\nYAML for {int(all_envs['environments'])} environments (every one changed): "
          f"render_child_pipeline {all_envs['render_ms']:.1f} ms in process "
          f"({int(all_envs['yaml_bytes'])} bytes); `envgate generate` end to end "
          f"{statistics.median(e2e):.1f} ms ({n_all} environments). Medians of {args.runs} runs.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
