#!/usr/bin/env python3
"""The repository `generate_bench.py` measures on: 50,000 files grown over 5,000
commits (written with one `git fast-import` stream, a few seconds), and an
envgate.yml of 200 environments whose `paths` mix `**` trees, shared folders,
`*` and `[...]` globs, with `after:` promotion chains. Cached: a second run with
the same parameters reuses the repository.

Layout (env-NNN for NNN in 000..199):
  envs/env-NNN/<app>/<part>/file-K.yaml     35,000 files, the environment's own tree
  shared/lib-KK/**                            5,000 files, lib-KK shared by 10 envs
  charts/chart-CC/values-env-NNN.yaml         4,000 values files (one per env and chart)
  charts/chart-CC/templates/*.yaml            1,000 files no environment matches
  terraform/region-R/stack-S/env-NNN.tfvars   2,000 files, matched by `**/env-NNN.tfvars`
  regions/region-R/**                         2,000 files, region-R shared by 25 envs
  docs/**                                     1,000 files no environment matches

Every commit adds 10 new files (in shuffled order, so a commit touches several
environments) and modifies 5 existing ones; every 50th commit renames a file and
every 100th deletes one. Usable alone: `generate_bench_repo.py DIR` prints the
repository and config paths.
"""
import argparse
import json
import os
import random
import subprocess
import sys

VERSION = 1  # bump when the layout changes: invalidates caches
ENVS = 200
COMMITS = 5000
FILES = 50000
NEW_PER_COMMIT = FILES // COMMITS
MODIFIED_PER_COMMIT = 5


def env_name(i):
    return f"env-{i:03d}"


def all_paths():
    paths = []
    for e in range(ENVS):
        for k in range(175):
            paths.append(f"envs/{env_name(e)}/app-{k % 5}/part-{k % 7}/file-{k}.yaml")
    for lib in range(20):
        for k in range(250):
            paths.append(f"shared/lib-{lib:02d}/src/mod-{k % 10}/f{k}.py")
    for chart in range(20):
        for e in range(ENVS):
            paths.append(f"charts/chart-{chart:02d}/values-{env_name(e)}.yaml")
        for k in range(50):
            paths.append(f"charts/chart-{chart:02d}/templates/t{k}.yaml")
    for r in range(8):
        for s in range(250):
            e = (r * 250 + s) % ENVS
            paths.append(f"terraform/region-{r}/stack-{s % 10}/{env_name(e)}-{s}.tfvars")
    for r in range(8):
        for k in range(250):
            paths.append(f"regions/region-{r}/k{k % 10}/c{k}.conf")
    for k in range(1000):
        paths.append(f"docs/section-{k % 20}/page-{k}.md")
    assert len(paths) == FILES, len(paths)
    assert len(set(paths)) == FILES
    return paths


def env_globs(i):
    """The `paths` of environment i (terraform files are env-NNN-S.tfvars)."""
    name = env_name(i)
    return [
        f"envs/{name}/**/*",
        f"shared/lib-{i % 20:02d}/**/*",
        f"charts/*/values-{name}.yaml",
        f"**/{name}-[0-9]*.tfvars",
        f"regions/region-{i % 8}/",
    ]


def config_text():
    lines = [
        "version: 1",
        "defaults:",
        "  namespace: bench",
        "  lock: { store: file, path: .envgate/locks }",
        "environments:",
    ]
    for i in range(ENVS):
        lines.append(f"  - name: {env_name(i)}")
        if i % 4 != 0:  # chains of 4: env-(4k) -> env-(4k+1) -> ... -> env-(4k+3)
            lines.append(f"    after: [ {env_name(i - 1)} ]")
        globs = ", ".join(f'"{g}"' for g in env_globs(i))
        lines.append(f"    paths: [ {globs} ]")
    lines += [
        "steps:",
        '  diff: "helmfile -e $ENVGATE_ENV diff"',
        '  deploy: "helmfile -e $ENVGATE_ENV apply"',
        '  qa: "scripts/qa $ENVGATE_ENV"',
        "",
    ]
    return "\n".join(lines)


def data(out, text):
    raw = text.encode()
    out.append(b"data %d\n" % len(raw))
    out.append(raw)
    out.append(b"\n")


def fast_import_stream():
    rng = random.Random(7)
    order = all_paths()
    rng.shuffle(order)
    live = []
    out = []
    t0 = 1_700_000_000
    for c in range(COMMITS):
        out.append(b"commit refs/heads/main\n")
        out.append(b"committer Bench <bench@example.com> %d +0000\n" % (t0 + 60 * c))
        data(out, f"commit {c}\n")
        ops = []
        for p in order[c * NEW_PER_COMMIT:(c + 1) * NEW_PER_COMMIT]:
            ops.append((p, f"{p} created in {c}\n" + "x" * 40 + "\n"))
        if live:
            for p in rng.sample(live, min(MODIFIED_PER_COMMIT, len(live))):
                ops.append((p, f"{p} changed in {c}\n" + "y" * 40 + "\n"))
        for p, text in ops:
            out.append(b"M 100644 inline %s\n" % p.encode())
            data(out, text)
        live.extend(order[c * NEW_PER_COMMIT:(c + 1) * NEW_PER_COMMIT])
        if c > 0 and c % 50 == 0:
            i = rng.randrange(len(live))
            old = live[i]
            new = old.rsplit(".", 1)[0] + "-moved." + old.rsplit(".", 1)[1]
            out.append(b"R %s %s\n" % (old.encode(), new.encode()))
            live[i] = new
        if c > 0 and c % 100 == 0:
            victim = live.pop(rng.randrange(len(live)))
            out.append(b"D %s\n" % victim.encode())
        out.append(b"\n")
    return b"".join(out)


def ensure_repo(cache_dir):
    """Creates (or reuses) the repository and config under cache_dir; returns
    {"repo": ..., "config": ..., "commits": [...]} with commits oldest first."""
    stamp_path = os.path.join(cache_dir, "stamp.json")
    stamp = {"version": VERSION, "envs": ENVS, "commits": COMMITS, "files": FILES}
    repo = os.path.join(cache_dir, "repo")
    config = os.path.join(cache_dir, "envgate.yml")
    if os.path.exists(stamp_path):
        with open(stamp_path) as f:
            if json.load(f) == stamp:
                return {"repo": repo, "config": config, "commits": rev_list(repo)}
    subprocess.run(["rm", "-rf", cache_dir], check=True)
    os.makedirs(cache_dir)
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
    subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input=fast_import_stream(),
                   check=True)
    # One pack with deltas, as a clone would have; both tools read the same objects.
    subprocess.run(["git", "-C", repo, "gc", "-q", "--aggressive"], check=True)
    with open(config, "w") as f:
        f.write(config_text())
    with open(stamp_path, "w") as f:
        json.dump(stamp, f)
    return {"repo": repo, "config": config, "commits": rev_list(repo)}


def rev_list(repo):
    out = subprocess.run(["git", "-C", repo, "rev-list", "--reverse", "main"], check=True,
                         capture_output=True, text=True).stdout.split()
    assert len(out) == COMMITS, len(out)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cache_dir")
    args = parser.parse_args()
    info = ensure_repo(args.cache_dir)
    print(f"repo {info['repo']}\nconfig {info['config']}\ncommits {len(info['commits'])}")


if __name__ == "__main__":
    sys.exit(main())
