"""The numpy all-MiniLM-L6-v2 forward pass reproduces the published model."""

import pytest
import numpy as np

from clinbench.dx.embeddings import cosine, embed, embedder


def test_reproduces_sentence_transformers_reference_similarities():
    # The sentence-transformers README's all-MiniLM-L6-v2 example prints this matrix
    # (rounded to 4 places): 0.6660, 0.1046, 0.1411.
    v = embed(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    sims = v @ v.T
    assert np.allclose(np.diag(sims), 1.0, atol=1e-5)
    assert abs(sims[0, 1] - 0.6660) < 1e-3
    assert abs(sims[0, 2] - 0.1046) < 1e-3
    assert abs(sims[1, 2] - 0.1411) < 1e-3


def test_medical_synonyms_are_closer_than_unrelated_terms():
    assert cosine("myocardial infarction", "heart attack") > cosine("myocardial infarction", "fractured femur") + 0.3


def _encode(texts):
    """The forward pass itself, past the per-text cache."""
    return embedder()._embed(texts, np.zeros((len(texts), 384), dtype=np.float32), 64)


@pytest.mark.slow
def test_batching_does_not_change_vectors():
    texts = ["pneumonia", "acute pancreatitis with a long qualifier about gallstones", "ITP"]
    together = _encode(texts)
    alone = np.vstack([_encode([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(embed(texts), together, atol=1e-6)  # the cached vectors are the same


def test_a_long_text_is_not_padded_onto_short_ones():
    # A turn's new texts, a vignette beside two short results, were one batch padded to the vignette's
    # length: 3 x 120 word pieces encoded for about 130.
    m, pieces = embedder(), []
    real = m._encode_batch
    m._encode_batch = lambda ids, mask: (pieces.append((ids.size, int(mask.sum()))), real(ids, mask))[1]
    texts = ["Na 139", "K 4.1", "58-year-old man with " + "crushing chest pain radiating to the left arm, " * 12]
    try:
        vectors = _encode(texts)
    finally:
        del m._encode_batch
    encoded, real_pieces = map(sum, zip(*pieces))
    assert len(pieces) == 2 and encoded <= real_pieces + 8
    assert np.allclose(vectors, np.vstack([_encode([t]) for t in texts]), atol=1e-5)


@pytest.mark.slow
def test_forward_pass_stays_float32():
    # A float64 scalar in the attention scale made every later step float64 (NumPy 2
    # promotion): 3x the CPU of the demo's offline stack (38.5 s -> 12.3 s on 32 cases).
    m = embedder()
    enc = m.tok.encode("Acute calculous cholecystitis")
    ids = np.array([enc.ids], dtype=np.int64)
    assert m._encode_batch(ids, np.ones(ids.shape, dtype=np.float32)).dtype == np.float32


def test_a_text_is_encoded_once_per_process():
    m, calls = embedder(), []
    real = m._embed
    m._embed = lambda texts, out, bs: (calls.append(list(texts)), real(texts, out, bs))[1]
    try:
        embed(["cache probe: ruptured spleen", "cache probe: torsion"])
        embed(["cache probe: torsion", "cache probe: ovarian cyst"])
    finally:
        del m._embed
    assert calls == [["cache probe: ruptured spleen", "cache probe: torsion"], ["cache probe: ovarian cyst"]]
