/*
 * build/bin/train: train the course model (common/model.h) on the CPU.
 *
 *     build/bin/train                                  # CI-sized run on the Markov source
 *     build/bin/train --data book.txt --d-model 384 --layers 6 --heads 6 --seq 256
 *     build/bin/train --save run.ckpt --stop-at 100    # ... later:
 *     build/bin/train --resume run.ckpt --save run.ckpt   # (a --log goes on from step 100)
 *
 * A resume must compute as the run did: the checkpoint records the backend,
 * precision, attention and matmul kernel, and other settings are refused with
 * the flags that match; it also records the device and the math library (and
 * its version), and a resume on others goes on with a warning. --log may not
 * name the --data, --resume or --save file, nor --save the --data file: the
 * run would write over what it reads.
 *
 * Flags map one to one onto train_opts_t (trainer.h), where the loop lives.
 * This file is also the main of the lab-05 programs
 * build/<target>/<src>/05-single-gpu-training/train, compiled with
 * COURSE_TRAIN_GPU: those add --backend cuda (a GPU build) or emu (the SIMT
 * emulator build) on top of cpu, and --matmul, which switches the student's
 * lab-04 kernel into the model's matmuls (matmul_switch.h). Not here yet:
 * data-parallel ranks (lab 07).
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "trainer.h"
#ifdef COURSE_TRAIN_GPU
#include "gpu.h"
#include "matmul_switch.h"
#include "trainer_gpu.h"
#endif

int main(int argc, char **argv) {
    /* Each line as it is printed, also into a pipe or a log file: the progress lines go to
     * stdout and the errors to stderr, which would otherwise come first, out of order. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    train_opts_t o = train_opts_default();
    int d_model = o.cfg.d_model, layers = o.cfg.n_layers, heads = o.cfg.n_heads;
    int ffn = o.cfg.d_ff, max_seq = o.cfg.max_seq;
    long long seed = (long long)o.seed, markov_seed = (long long)o.markov_seed;
    const char *backend = "cpu";
#ifdef COURSE_TRAIN_GPU
    const char *matmul = "auto", *attention = "auto";
#endif
    const arg_spec_t specs[] = {
        {"backend", ARG_STRING, &backend, "where the model runs: cpu, cuda (GPU build) or emu (emulator build)", 1, 0},
        {"d-model", ARG_INT, &d_model, "width of the residual stream", 2, 16384},
        {"layers", ARG_INT, &layers, "transformer blocks", 1, 256},
        {"heads", ARG_INT, &heads, "attention heads (must divide --d-model; even head size)", 1, 16384},
        {"ffn", ARG_INT, &ffn, "SwiGLU hidden width", 1, 65536},
        {"max-seq", ARG_INT, &max_seq, "longest sequence the model accepts", 1, 65536},
        {"seq", ARG_INT, &o.seq, "tokens per training sequence (<= --max-seq)", 1, 65536},
        {"batch", ARG_INT, &o.batch, "sequences per optimizer step (global batch)", 1, 1 << 20},
        {"accum", ARG_INT, &o.accum, "gradient-accumulation micro-batches per step (divides --batch)", 1, 1 << 20},
        {"steps", ARG_INT, &o.steps, "optimizer steps of the whole run (sets the schedule)", 1, 1 << 30},
        {"warmup", ARG_INT, &o.warmup, "linear learning-rate warmup steps (more than --steps: lr never reaches --lr)", 0, 1 << 30},
        {"lr", ARG_DOUBLE, &o.lr, "peak learning rate", 0, 10},
        {"min-lr", ARG_DOUBLE, &o.min_lr, "learning rate at the end of the cosine decay", 0, 10},
        {"weight-decay", ARG_DOUBLE, &o.weight_decay, "AdamW decoupled weight decay (matrices only)", 0, 10},
        {"beta1", ARG_DOUBLE, &o.beta1, "AdamW beta1", 0, 1},
        {"beta2", ARG_DOUBLE, &o.beta2, "AdamW beta2", 0, 1},
        {"adam-eps", ARG_DOUBLE, &o.adam_eps, "AdamW epsilon (> 0: it keeps sqrt(v) + eps away from 0)", 0, 1},
        {"clip", ARG_DOUBLE, &o.clip, "clip gradients to this global L2 norm (0: off)", 0, 1e30},
        {"seed", ARG_LONG, &seed, "seed of parameter init and data sampling", 0, 9e18},
        {"data", ARG_STRING, &o.data_path, "train on this text file instead of the Markov source", 1, 0},
        {"markov-seed", ARG_LONG, &markov_seed, "seed of the Markov source's transition table", 0, 9e18},
        {"markov-states", ARG_INT, &o.markov_states, "Markov source alphabet (bytes 0..states-1)", 2, 256},
        {"markov-branch", ARG_INT, &o.markov_branch, "successors per Markov state (lower: lower entropy)", 1, 256},
        {"eval-every", ARG_INT, &o.eval_every, "eval loss every this many steps (0: only at the end)", 0, 1 << 30},
        {"eval-batches", ARG_INT, &o.eval_batches, "held-out batches of --batch sequences per eval (the same ones whatever --accum)", 1, 1 << 20},
        {"print-every", ARG_INT, &o.print_every, "progress line every this many steps (0: quiet)", 0, 1 << 30},
        {"log", ARG_STRING, &o.log_path, "write a per-step loss log here (.json: JSON, else CSV; with --resume, added to)", 1, 0},
        {"log-format", ARG_STRING, &o.log_format, "csv or json (default: from the --log file name)", 1, 0},
        {"save", ARG_STRING, &o.save_path, "checkpoint file, written at the end (and every --save-every); checked writable before step 1", 1, 0},
        {"save-every", ARG_INT, &o.save_every, "also checkpoint every this many steps (0: only at the end)", 0, 1 << 30},
        {"resume", ARG_STRING, &o.resume_path, "continue bit-identically from this checkpoint (with the flags it was written with, --backend, --attention and --matmul included)", 1, 0},
        {"stop-at", ARG_INT, &o.stop_at, "stop (and save) after this step, as an interruption would (0: off)", 0, 1 << 30},
        {"threads", ARG_INT, &o.threads, "threads (0: OMP_NUM_THREADS or all cores); results do not depend on it", 0, 4096},
        {"peak-tflops", ARG_DOUBLE, &o.peak_tflops, "MFU denominator in TFLOP/s (0: a GPU's bf16 peak by name, unknown for a GPU not in the table; this CPU's measured fp32 sgemm for cpu and emu)", 0, 1e6},
#ifdef COURSE_TRAIN_GPU
        {"matmul", ARG_STRING, &matmul, "matmul kernel of --backend cuda/emu: auto (cuBLAS on a GPU, tiled on the emulator), " TRAIN_MATMUL_NAMES " (lab 04)", 1, 0},
        {"attention", ARG_STRING, &attention, "attention of --backend cuda/emu: auto (flash where the head size allows), naive (stores T x T; your lab-05 softmax backward) or flash", 1, 0},
#endif
    };
    const args_t args = {"train", "train the course's Llama-style byte-level transformer",
                         specs, (int)(sizeof specs / sizeof specs[0])};
    args_parse_or_exit(&args, argc, argv);
#ifdef COURSE_TRAIN_GPU
    train_set_gpu_backend(train_gpu_backend_open);
#endif
    o.backend = backend;
    o.cfg.d_model = d_model;
    o.cfg.n_layers = layers;
    o.cfg.n_heads = heads;
    o.cfg.d_ff = ffn;
    o.cfg.max_seq = max_seq;
    o.seed = (uint64_t)seed;
    o.markov_seed = (uint64_t)markov_seed;
    char err[1024];
    if (train_opts_validate(&o, err, sizeof err)) {
        fprintf(stderr, "train: %s\n", err);
        return 2;
    }
#ifdef COURSE_TRAIN_GPU
    if ((strcmp(matmul, "auto") || strcmp(attention, "auto")) && !strcmp(backend, "cpu")) {
        fprintf(stderr, "train: --matmul and --attention apply to the GPU backend; add --backend cuda (or emu)\n");
        return 2;
    }
    if (train_gpu_set_attention(attention, err, sizeof err)) {
        fprintf(stderr, "train: %s\n", err);
        return 2;
    }
    /* Without a device the backend itself says what to do when it opens. */
    if (strcmp(backend, "cpu") && gpu_available() && train_select_matmul(matmul, err, sizeof err)) {
        fprintf(stderr, "train: %s\n", err);
        return 2;
    }
#endif
    return train_run(&o, NULL) == 0 ? 0 : 1;
}
