"""Towerflow's example training programs against the same models in PyTorch
on the CPU, side by side: the two take turns, round after round, so that a
load on the machine falls on both, and the table gives the median step time
of each, their ratio and each side's peak resident memory.

Towerflow's side is the example program end to end (examples/resnet or
examples/cifar10: its input pipeline on random CIFAR-10 records, the
Estimator, one tower, batch 128), timed by its own step log over the steps
after the first `warmup`; PyTorch's is bench/models_torch.py (the same model,
forward, backward and update on a fixed batch, `--threads` threads).

  tools/bootstrap.sh && apt-get install -y python3-torch
  bazel build //examples/resnet:resnet_train //examples/cifar10:cifar10_train
  /usr/bin/python3 bench/cpu_vs_torch.py [--models resnet20,resnet32,cifar10] [--rounds 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STEP = re.compile(r"step (\d+), loss = \S+ \(\S+ examples/sec; ([0-9.]+) sec/batch\)")
TORCH = re.compile(r"([0-9.]+) ms/step")


def run(argv, env=None):
    """Runs argv; returns its output (stdout and stderr) and peak RSS in MB."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed ({proc.returncode}):\n{out}")
    return out, usage.ru_maxrss / 1024


def write_cifar10(directory, records=1000):
    """CIFAR-10 binary files of random images (the work does not depend on the pixels)."""
    for name in ["data_batch_%d" % i for i in range(1, 6)] + ["test_batch"]:
        with open(os.path.join(directory, name + ".bin"), "wb") as f:
            for i in range(records):
                f.write(bytes([i % 10]) + os.urandom(3072))


def towerflow_step(model, data_dir, steps, warmup, log_every):
    program, flags = {
        "cifar10": ("examples/cifar10/cifar10_train", []),
        "resnet20": ("examples/resnet/resnet_train", ["--resnet_size=20"]),
        "resnet32": ("examples/resnet/resnet_train", ["--resnet_size=32"]),
        "resnet56": ("examples/resnet/resnet_train", ["--resnet_size=56"]),
    }[model]
    with tempfile.TemporaryDirectory() as model_dir:
        out, rss = run([os.path.join(ROOT, "bazel-bin", program), *flags, "--data_dir=" + data_dir,
                        "--model_dir=" + model_dir, "--num_towers=1", "--batch_size=128",
                        "--max_steps=%d" % steps, "--log_every=%d" % log_every, "--eval=false"])
    # Each line's sec/batch is the mean over the `log_every` steps before it.
    times = [float(t) for step, t in STEP.findall(out) if int(step) > warmup]
    if not times:
        sys.exit(f"no step lines after step {warmup} in:\n{out}")
    return statistics.mean(times), rss


def torch_step(model, threads, steps):
    out, rss = run([sys.executable, os.path.join(HERE, "models_torch.py"), "--model", model,
                    "--device", "cpu", "--threads", str(threads), "--steps", str(steps)])
    return float(TORCH.search(out).group(1)) / 1e3, rss


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="resnet20,resnet32,cifar10")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40, help="Towerflow's steps per run")
    parser.add_argument("--warmup", type=int, default=10, help="Towerflow's steps not timed")
    parser.add_argument("--torch_steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        write_cifar10(data_dir)
        print(f"{'model':<10} {'towerflow s/step':>17} {'torch s/step':>13} {'torch/towerflow':>16} "
              f"{'towerflow MB':>13} {'torch MB':>9}")
        for model in args.models.split(","):
            tw, pt, tw_rss, pt_rss = [], [], [], []
            for _ in range(args.rounds):
                seconds, rss = towerflow_step(model, data_dir, args.steps, args.warmup, 10)
                tw.append(seconds)
                tw_rss.append(rss)
                seconds, rss = torch_step(model, args.threads, args.torch_steps)
                pt.append(seconds)
                pt_rss.append(rss)
            t, p = statistics.median(tw), statistics.median(pt)
            print(f"{model:<10} {t:>17.3f} {p:>13.3f} {p / t:>15.2f}x {max(tw_rss):>13.0f} "
                  f"{max(pt_rss):>9.0f}", flush=True)
            print(f"{'':<10} runs: towerflow {' '.join('%.3f' % v for v in tw)}; "
                  f"torch {' '.join('%.3f' % v for v in pt)}", flush=True)


if __name__ == "__main__":
    main()
