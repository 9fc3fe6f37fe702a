"""The ImageNet training preprocessing in torchvision + PIL, the peer of
bench/imagenet_pipeline.cc on the same JPEGs (make_imagenet_records
--jpeg_dir): ImageFolder, RandomResizedCrop(224, scale (0.05, 1), ratio
(0.75, 1.33)) -- the official TF pipeline's crop distribution --, a random
flip, ToTensor and the mean subtraction, batches of 32 from a DataLoader
with 0 (the main process), 1 and 2 worker processes; images per second.

  /usr/bin/python3 bench/imagenet_pipeline_torch.py --jpeg_dir /tmp/imagenet_jpeg [--batches 30]
"""
import argparse
import time

import torch
import torchvision
from torchvision import transforms


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jpeg_dir", required=True)
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    mean = [123.68 / 255, 116.78 / 255, 103.94 / 255]
    preprocess = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.05, 1.0), ratio=(0.75, 1.33)),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(mean, [1 / 255] * 3),  # x * 255 - mean
    ])
    data = torchvision.datasets.ImageFolder(args.jpeg_dir, preprocess)
    for workers in (0, 1, 2):
        loader = torch.utils.data.DataLoader(data, batch_size=args.batch, shuffle=True,
                                             num_workers=workers, drop_last=True,
                                             persistent_workers=workers > 0)
        batches, it = 0, iter(loader)
        next(it)  # start the workers
        start = time.perf_counter()
        while batches < args.batches:
            try:
                next(it)
            except StopIteration:
                it = iter(loader)
                continue
            batches += 1
        seconds = time.perf_counter() - start
        print(f"torch {torch.__version__} torchvision {torchvision.__version__} pipeline, "
              f"{workers} worker(s): {batches * args.batch / seconds:.1f} images/sec", flush=True)


if __name__ == "__main__":
    main()
