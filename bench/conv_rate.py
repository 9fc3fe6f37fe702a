"""The convolutions inside Towerflow's training step against the machine's
FMA peak: runs an example trainer (one tower, batch 128, random CIFAR-10
records) with oneDNN's verbose log, and sums, over the steps after the
first `warmup`, each convolution's time as oneDNN measured it and its
arithmetic as a direct convolution (2 * batch * in/groups * out * kernel
* output pixels per pass; a Winograd pass does fewer multiplications, so
its rate is "as direct"). Reorders between our layouts and oneDNN's are
counted apart. Prints a table per (algorithm, pass) and the totals per
step, with the step time from the trainer's own log.

  tools/bootstrap.sh
  bazel build //examples/resnet:resnet_train //examples/cifar10:cifar10_train //bench:kernels_bench
  bazel-bin/bench/kernels_bench --benchmark_filter=FmaPeak
  python3 bench/conv_rate.py [--model resnet20] [--steps 30] [--warmup 10] [--peak GFLOPS]
"""
import argparse
import collections
import os
import re
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_vs_torch import STEP, TOWERFLOW_MODELS, run_towerflow, write_cifar10  # noqa: E402

PROBLEM = re.compile(r"^(?:g(\d+))?mb(\d+)_ic(\d+)oc(\d+)_ih\d+oh(\d+)kh(\d+)\S*_iw\d+ow(\d+)kw(\d+)")


def direct_flops(problem):
    """A convolution's multiply-adds, times 2, from oneDNN's problem string."""
    m = PROBLEM.match(problem)
    if not m:
        sys.exit("unexpected oneDNN problem descriptor: " + problem)
    groups, mb, ic, oc, oh, kh, ow, kw = (int(v) if v else 1 for v in m.groups())
    return 2 * mb * (ic // groups) * oc * kh * kw * oh * ow


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="resnet20", choices=sorted(TOWERFLOW_MODELS))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--peak", type=float, default=0.0,
                        help="the machine's FMA peak in GFLOP/s (kernels_bench's BM_FmaPeak, "
                             "threads:2 here), for the share")
    args = parser.parse_args()
    if args.steps <= args.warmup:
        sys.exit("--steps must be more than --warmup")
    with tempfile.TemporaryDirectory() as data_dir:
        write_cifar10(data_dir)
        out, _ = run_towerflow(args.model, data_dir, args.steps, 1,
                               env=dict(os.environ, ONEDNN_VERBOSE="1"))

    # The verbose lines between the log lines of steps `warmup` and `steps`.
    conv_ms = collections.defaultdict(float)
    conv_flops = collections.defaultdict(float)
    reorder_ms = 0.0
    step_seconds = []
    counting = False
    for line in out.splitlines():
        m = STEP.search(line)
        if m:
            step = int(m.group(1))
            counting = args.warmup <= step < args.steps
            if step > args.warmup:
                step_seconds.append(float(m.group(2)))
            continue
        if not counting or not line.startswith(("onednn_verbose,exec,", "dnnl_verbose,exec,")):
            continue
        fields = line.split(",")
        primitive, prop, problem, ms = fields[3], fields[5], fields[-2], float(fields[-1])
        if primitive == "reorder":
            reorder_ms += ms
        elif primitive == "convolution":
            alg = next((f[len("alg:convolution_"):] for f in fields if f.startswith("alg:")), "?")
            conv_ms[(alg, prop)] += ms
            conv_flops[(alg, prop)] += direct_flops(problem)
    steps = args.steps - args.warmup
    if not conv_ms or len(step_seconds) != steps:
        sys.exit("no convolutions or step lines in the trainer's output (is this oneDNN 2.x?)")

    print(f"{args.model}: {steps} steps, {statistics.median(step_seconds) * 1e3:.1f} ms a step "
          f"(median of the step log)")
    print(f"{'algorithm':<10} {'pass':<18} {'ms/step':>8} {'GFLOP/step':>11} {'GFLOP/s':>8}")
    for key in sorted(conv_ms):
        print(f"{key[0]:<10} {key[1]:<18} {conv_ms[key] / steps:8.1f} "
              f"{conv_flops[key] / steps / 1e9:11.2f} {conv_flops[key] / conv_ms[key] / 1e6:8.0f}")
    total_ms, total_flops = sum(conv_ms.values()), sum(conv_flops.values())
    rate = total_flops / total_ms / 1e6
    print(f"convolutions: {total_ms / steps:.1f} ms/step, {total_flops / steps / 1e9:.2f} GFLOP "
          f"as direct, {rate:.0f} GFLOP/s" +
          (f" = {100 * rate / args.peak:.0f}% of the {args.peak:.0f} GFLOP/s peak"
           if args.peak > 0 else ""))
    print(f"reorders to and from oneDNN's layouts: {reorder_ms / steps:.1f} ms/step")


if __name__ == "__main__":
    main()
