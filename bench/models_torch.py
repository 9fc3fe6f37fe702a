"""The examples' models in PyTorch, for the GPU comparison in bench/README.md:
the CIFAR-10 tutorial model (examples/cifar10, 24x24x3 input) and the official
CIFAR-10 ResNet v2 (examples/resnet, 32x32x3 input, pre-activation blocks,
projection shortcuts at the first block of each stage, batch norm momentum
0.997 and epsilon 1e-5, Momentum 0.9 with weight decay 2e-4 on all but batch
norm). One training step (forward, backward, update) on data already on the
device, eager, batch 128 unless told; with --inference, one forward pass of
the model in eval mode without autograd (batch norm on its moving averages).
With --cuda_graph the whole training step is recorded once with
torch.cuda.graph (after warm-up steps on a side stream, PyTorch's recipe) and
replayed, the peer of Towerflow's replayed steps (runtime/step_replay.h). With
--autocast bfloat16 or float16 the forward pass and the loss run under
torch.autocast (float16 with a GradScaler, whose overflow check reads the GPU
back, so it is not recorded), the peer of gpu_replay --precision. The line
also gives the host's CPU time per step.

  python3 bench/models_torch.py --model resnet20 --device cuda [--batch 128]
  python3 bench/models_torch.py --model resnet20 --device cuda --cuda_graph
  python3 bench/models_torch.py --model resnet56 --device cuda --autocast bfloat16
  python3 bench/models_torch.py --model resnet50 --device cpu --threads 2 --batch 32
  python3 bench/models_torch.py --model cifar10 --device cpu --threads 2
  python3 bench/models_torch.py --model cifar10 --device cpu --threads 2 --inference --batch 1
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from cifar10_torch import Cifar10


class Block(nn.Module):
    """BN-ReLU, conv 3x3, BN-ReLU, conv 3x3, plus the shortcut (resnet v2)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin, eps=1e-5, momentum=0.003)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout, eps=1e-5, momentum=0.003)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.project = nn.Conv2d(cin, cout, 1, stride, bias=False) if (stride != 1 or cin != cout) else None

    def forward(self, x):
        pre = F.relu(self.bn1(x))
        shortcut = self.project(pre) if self.project is not None else x
        y = self.conv1(pre)
        y = self.conv2(F.relu(self.bn2(y)))
        return y + shortcut


class ResNet(nn.Module):
    def __init__(self, size, num_classes=10):
        super().__init__()
        n = (size - 2) // 6
        self.conv = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        blocks, cin = [], 16
        for cout, stride in ((16, 1), (32, 2), (64, 2)):
            for i in range(n):
                blocks.append(Block(cin, cout, stride if i == 0 else 1))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.bn = nn.BatchNorm2d(64, eps=1e-5, momentum=0.003)
        self.dense = nn.Linear(64, num_classes)

    def forward(self, x):
        x = self.blocks(self.conv(x))
        x = F.relu(self.bn(x))
        return self.dense(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class Bottleneck(nn.Module):
    """torchvision's ResNet v1.5 bottleneck: 1x1, 3x3 (strided), 1x1 x4, each
    with batch norm, the projection shortcut where the shape changes."""

    def __init__(self, cin, width, stride):
        super().__init__()
        cout = 4 * width
        self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3, self.bn3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
        self.downsample = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                         nn.BatchNorm2d(cout))
                           if stride != 1 or cin != cout else None)

    def forward(self, x):
        shortcut = self.downsample(x) if self.downsample is not None else x
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        return F.relu(self.bn3(self.conv3(y)) + shortcut)


class ResNet50(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64)
        blocks, cin = [], 64
        for width, n, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(n):
                blocks.append(Bottleneck(cin, width, stride if i == 0 else 1))
                cin = 4 * width
        self.layers = nn.Sequential(*blocks)
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.layers(x), 1), 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="cifar10",
                        choices=["cifar10", "resnet20", "resnet32", "resnet56", "resnet50"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--inference", action="store_true",
                        help="time the forward pass in eval mode under torch.no_grad()")
    parser.add_argument("--no_tf32", action="store_true",
                        help="full float32 convolutions (PyTorch lets cuDNN use TF32 by default)")
    parser.add_argument("--cuda_graph", action="store_true",
                        help="record the training step with torch.cuda.graph and replay it")
    parser.add_argument("--autocast", default="none", choices=["none", "bfloat16", "float16"],
                        help="mixed precision: torch.autocast to this type (float16 with a GradScaler)")
    args = parser.parse_args()
    if args.autocast != "none" and args.device != "cuda":
        parser.error("--autocast is measured on cuda")
    if args.autocast == "float16" and args.cuda_graph:
        parser.error("a GradScaler's step reads the GPU back: --autocast float16 is not recorded")
    if args.cuda_graph and (args.inference or args.device != "cuda"):
        parser.error("--cuda_graph records a training step on cuda")
    if args.no_tf32:
        torch.backends.cudnn.allow_tf32 = False
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    device = torch.device(args.device)
    if args.model == "cifar10":
        model, side = Cifar10(), 24
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    elif args.model == "resnet50":
        # torchvision's ResNet-50 (v1.5: the stride in the 3x3 convolution, as
        # the official TF model), 1,001 classes, imagenet_main.py's optimizer:
        # Momentum 0.9, 0.128 per 256 examples, weight decay 1e-4 but on
        # batch norm.
        try:
            import torchvision
            model = torchvision.models.resnet50(num_classes=1001)
        except ImportError:  # a machine without torchvision: the same network
            model = ResNet50(num_classes=1001)
        side = 224
        decay = [p for name, p in model.named_parameters() if "bn" not in name]
        no_decay = [p for name, p in model.named_parameters() if "bn" in name]
        opt = torch.optim.SGD([{"params": decay, "weight_decay": 1e-4},
                               {"params": no_decay, "weight_decay": 0}],
                              lr=0.128 * args.batch / 256, momentum=0.9)
    else:
        model, side = ResNet(int(args.model[len("resnet"):])), 32
        decay = [p for name, p in model.named_parameters() if "bn" not in name]
        no_decay = [p for name, p in model.named_parameters() if "bn" in name]
        opt = torch.optim.SGD([{"params": decay, "weight_decay": 2e-4},
                               {"params": no_decay, "weight_decay": 0}], lr=0.1, momentum=0.9)
    model.to(device)
    images = torch.randn(args.batch, 3, side, side, device=device)
    labels = (torch.arange(args.batch) % 10).to(device)
    if args.model == "resnet50":
        images = images * 60 + 127  # the official synthetic data's scale

    low = {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(args.autocast)
    scaler = torch.cuda.amp.GradScaler() if args.autocast == "float16" else None

    def loss_of_step():
        if low is None:
            return F.cross_entropy(model(images), labels)
        with torch.autocast("cuda", dtype=low):
            return F.cross_entropy(model(images), labels)

    def train_step():
        opt.zero_grad()
        if scaler is None:
            loss_of_step().backward()
            opt.step()
        else:
            scaler.scale(loss_of_step()).backward()
            scaler.step(opt)
            scaler.update()

    def inference_step():
        with torch.no_grad():
            model(images)

    if args.inference:
        model.eval()
    step = inference_step if args.inference else train_step

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    record_ms = None
    if args.cuda_graph:
        # Warm-up on a side stream, then one recording (the step's
        # gradients and the optimizer's update included); replays reuse the
        # recorded tensors, as Towerflow's replays reuse their slots.
        side_stream = torch.cuda.Stream()
        side_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side_stream):
            for _ in range(5):
                opt.zero_grad(set_to_none=True)
                train_step()
        torch.cuda.current_stream().wait_stream(side_stream)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        sync()
        started = time.perf_counter()
        with torch.cuda.graph(graph):
            loss_of_step().backward()
            opt.step()
        sync()
        record_ms = (time.perf_counter() - started) * 1e3
        step = graph.replay
    else:
        for _ in range(5):  # warm-up (cuDNN's algorithm choice, the allocator)
            step()
    sync()
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(args.steps):
        step()
    sync()
    per_step = (time.perf_counter() - start) / args.steps
    cpu_per_step = (time.process_time() - cpu_start) / args.steps
    tf32 = "" if args.device == "cpu" else (", no TF32" if args.no_tf32 else ", TF32 convolutions")
    what = "inference" if args.inference else "training"
    graph = f", whole step in torch.cuda.graph (recorded in {record_ms:.0f} ms)" if args.cuda_graph else ""
    amp = f", autocast {args.autocast}" if low is not None else ""
    print(f"torch {torch.__version__} {args.model} {what} on {args.device}{tf32}{amp}{graph}, "
          f"batch {args.batch}: {per_step * 1e3:.2f} ms/step, {args.batch / per_step:.0f} images/s, "
          f"host CPU {cpu_per_step * 1e3:.2f} ms/step")


if __name__ == "__main__":
    main()
