"""The CIFAR-10 tutorial model's training step in PyTorch, for comparison
with bench/kernels_bench.cc's BM_Cifar10TrainingStep (same layers, batch 128,
24x24x3 input, 2 threads). Usage: python3 bench/cifar10_torch.py
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Cifar10(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 5, padding=2)
        self.conv2 = nn.Conv2d(64, 64, 5, padding=2)
        # TF's LRN(depth_radius=4, bias=1, alpha=0.001/9, beta=0.75): PyTorch
        # divides alpha by the window size (9).
        self.norm = nn.LocalResponseNorm(9, alpha=0.001, beta=0.75, k=1.0)
        self.local3 = nn.Linear(6 * 6 * 64, 384)
        self.local4 = nn.Linear(384, 192)
        self.logits = nn.Linear(192, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(x, 3, 2, padding=1)
        x = self.norm(x)
        x = F.relu(self.conv2(x))
        x = self.norm(x)
        x = F.max_pool2d(x, 3, 2, padding=1)
        x = torch.flatten(x, 1)
        x = F.relu(self.local3(x))
        x = F.relu(self.local4(x))
        return self.logits(x)


def main():
    torch.set_num_threads(2)
    torch.manual_seed(0)
    model = Cifar10()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    images = torch.randn(128, 3, 24, 24)
    labels = torch.arange(128) % 10
    for _ in range(3):  # warm-up
        opt.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        opt.step()
    steps, start = 20, time.perf_counter()
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        opt.step()
    per_step = (time.perf_counter() - start) / steps
    print(f"torch {torch.__version__}: {per_step * 1e3:.1f} ms/step, {128 / per_step:.0f} images/s")


if __name__ == "__main__":
    main()
