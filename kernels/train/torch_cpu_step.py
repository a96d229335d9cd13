#!/usr/bin/env python3
"""Time one training step of the course model in plain PyTorch on the CPU.

The yardstick for the cpu backend of build/bin/train: the same model (byte
vocabulary, RMSNorm, causal multi-head attention with RoPE on adjacent pairs,
SwiGLU, untied output projection, weights [in, out]), the same step (forward,
mean cross-entropy, backward, global-norm clipping, AdamW) and the same thread
count, written the straightforward way: autograd, torch.matmul, no fused
attention kernel, no compilation. Inputs are random bytes; only the time
matters. Prints the median step time and tokens/s; compare with the "done:" line of
build/bin/train on the same shape and --threads.

Needs PyTorch (Debian: apt-get install python3-torch; any CPU build works).
Run outside CI: `python3 kernels/train/torch_cpu_step.py --threads 2`.
"""
import argparse
import math
import os
import statistics
import time

# PyTorch parallelises with its own thread pool (--threads); a BLAS that also
# starts threads underneath (Debian's torch calls the system libblas, often
# OpenBLAS) oversubscribes the cores and runs slower with 2 threads than 1.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch  # noqa: E402  (after the environment above)


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope_tables(T, hd, theta):
    i = torch.arange(hd // 2, dtype=torch.float64)
    freq = theta ** (-2.0 * i / hd)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * freq[None, :]
    return torch.cos(ang).float(), torch.sin(ang).float()


def rope(x, cos, sin):
    # x [B, H, T, hd]: rotate the pairs (2i, 2i+1) by the angle of position t.
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


class Model(torch.nn.Module):
    def __init__(self, V, D, L, H, F, T, theta=10000.0, eps=1e-5):
        super().__init__()
        self.D, self.H, self.eps = D, H, eps
        p = lambda *s: torch.nn.Parameter(torch.randn(*s) * 0.02)
        self.tok = p(V, D)
        self.layers = torch.nn.ModuleList()
        for _ in range(L):
            blk = torch.nn.Module()
            blk.n1, blk.n2 = torch.nn.Parameter(torch.ones(D)), torch.nn.Parameter(torch.ones(D))
            blk.wq, blk.wk, blk.wv, blk.wo = p(D, D), p(D, D), p(D, D), p(D, D)
            blk.wg, blk.wu, blk.wd = p(D, F), p(D, F), p(F, D)
            self.layers.append(blk)
        self.nf = torch.nn.Parameter(torch.ones(D))
        self.head = p(D, V)
        cos, sin = rope_tables(T, D // H, theta)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)
        self.register_buffer("mask", torch.ones(T, T, dtype=torch.bool).tril())

    def forward(self, idx, tgt):
        B, T = idx.shape
        H, hd = self.H, self.D // self.H
        x = self.tok[idx]
        for b in self.layers:
            h = rms_norm(x, b.n1, self.eps)
            q, k, v = ((h @ w).view(B, T, H, hd).transpose(1, 2) for w in (b.wq, b.wk, b.wv))
            q, k = rope(q, self.cos[:T], self.sin[:T]), rope(k, self.cos[:T], self.sin[:T])
            s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
            s = s.masked_fill(~self.mask[:T, :T], float("-inf"))
            y = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, T, self.D)
            x = x + y @ b.wo
            h = rms_norm(x, b.n2, self.eps)
            x = x + (torch.nn.functional.silu(h @ b.wg) * (h @ b.wu)) @ b.wd
        logits = rms_norm(x, self.nf, self.eps) @ self.head
        return torch.nn.functional.cross_entropy(logits.view(B * T, -1), tgt.view(-1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--ffn", type=int, default=768)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.manual_seed(1)
    torch.set_num_threads(a.threads)
    m = Model(256, a.d_model, a.layers, a.heads, a.ffn, a.seq)
    decay = [p for n, p in m.named_parameters() if p.dim() == 2]
    rest = [p for n, p in m.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    idx = torch.randint(0, 256, (a.batch, a.seq))
    tgt = torch.randint(0, 256, (a.batch, a.seq))
    times = []
    for s in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = m(idx, tgt)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        if s >= a.warmup:
            times.append(time.perf_counter() - t0)
    step = statistics.median(times)
    n = sum(p.numel() for p in m.parameters())
    print(f"pytorch {torch.__version__} cpu, {a.threads} threads: {n} parameters, d_model {a.d_model}, "
          f"{a.layers} layers, seq {a.seq}, batch {a.batch}: step {1e3 * step:.1f} ms, "
          f"{a.batch * a.seq / step:.0f} tokens/s (median of {a.steps}), loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
