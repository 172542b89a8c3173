#!/usr/bin/env python3
"""Turns a --metrics file (JSON lines from examples/lenet_cifar10 or fashion_mnist) into a PNG of
the train loss and test accuracy per epoch. Uses Debian's python3-matplotlib, which a fresh
machine lacks (`apt-get install python3-matplotlib`; the tool says so when it is missing):

    /usr/bin/python3 tools/plot_metrics.py metrics.jsonl curves.png
"""
import json
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_metrics.py needs matplotlib: install Debian's package with "
             "`sudo apt-get install python3-matplotlib` (or `pip install matplotlib`), then run "
             "/usr/bin/python3 tools/plot_metrics.py METRICS.jsonl OUT.png again")

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_metrics.py METRICS.jsonl OUT.png")
    rows = []
    with open(sys.argv[1]) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    sys.exit(f"{sys.argv[1]}:{n}: not a JSON line ({e})")
    if not rows:
        sys.exit(f"{sys.argv[1]}: no metrics lines")
    epochs = [r["epoch"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epochs, [r["train_loss"] for r in rows], marker="o")
    ax1.set(xlabel="epoch", ylabel="train loss", title="Training loss")
    ax2.plot(epochs, [100 * r["test_accuracy"] for r in rows], marker="o", color="tab:green")
    ax2.set(xlabel="epoch", ylabel="test accuracy (%)", title="Test accuracy")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)
    print(f"wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
