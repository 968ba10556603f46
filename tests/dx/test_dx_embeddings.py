"""The numpy all-MiniLM-L6-v2 forward pass reproduces the published model."""

import numpy as np

from clinbench.dx.embeddings import cosine, embed


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


def test_batching_does_not_change_vectors():
    texts = ["pneumonia", "acute pancreatitis with a long qualifier about gallstones", "ITP"]
    together = embed(texts)
    alone = np.vstack([embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
