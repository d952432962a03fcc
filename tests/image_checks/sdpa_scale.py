"""Does this torch accept the attention call lit-gpt@6178c7cc makes (lit_gpt/model.py:
F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, scale=..., is_causal=True))?

    python sdpa_scale.py accepted   # images/litgpt's torch (NGC 23.09: 2.1): must accept it
    python sdpa_scale.py rejected   # NGC 23.05's torch 2.0: must refuse it (Lightning-AI/litgpt#763)
"""

import sys

import torch
import torch.nn.functional as F

expect = sys.argv[1]
q = k = v = torch.randn(1, 2, 4, 8)
try:
    F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, scale=8**-0.5, is_causal=True)
    outcome = "accepted"
except TypeError as error:
    outcome = "rejected"
    print(f"torch {torch.__version__}: {error}")
print(f"torch {torch.__version__}: scaled_dot_product_attention(..., scale=) {outcome} (expected {expect})")
sys.exit(0 if outcome == expect else 1)
