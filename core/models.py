"""Model architectures: the one table of the dense decoder-only transformers trainstack's recipes train.

Foundation module: imports only the standard library and `trainstack.core.errors`. Parameter counts
leave out norms, biases and learned position embeddings (each well under 1% of these models).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trainstack.core.errors import CatalogError


@dataclass(frozen=True)
class ModelShape:
    """A dense decoder-only transformer's shape.

    Attributes:
        name: the name stacks (`workload.model`), reports and `--model` use.
        layers: transformer layers.
        hidden: hidden size h.
        ffn: MLP inner size.
        heads: attention (query) heads a.
        kv_heads: key/value heads (fewer than `heads` under grouped-query attention).
        vocab: vocabulary size, padded as the training framework pads it.
        gated_mlp: SwiGLU-style MLP with three weight matrices instead of two.
        tied_embeddings: the output projection shares the input embedding's weights.
        max_seq_length: the context the model is built for (its position limit).
        parallel_residual: attention and MLP read the same input (GPT-NeoX/Pythia), not in series.
        init_method_std: NeMo's `init_method_std` for this model, where a launcher sets it.
        dropout: the model trains with hidden and attention dropout (p > 0), so its layers store
            dropout masks; False where its configs set both to 0.
        rotary: rotary position embeddings (RoPE), applied to Q and K in every layer.
        aliases: other spellings of the name (compared ignoring case and punctuation).
    """

    name: str
    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    gated_mlp: bool
    tied_embeddings: bool
    max_seq_length: int
    parallel_residual: bool = False
    init_method_std: float | None = None
    dropout: bool = True
    rotary: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def layer_params(self) -> int:
        """Weights of one layer: Q and output projections (2h^2), K and V (2h * kv width), MLP."""
        kv_width = self.kv_heads * (self.hidden // self.heads)
        attention = 2 * self.hidden * self.hidden + 2 * self.hidden * kv_width
        mlp = (3 if self.gated_mlp else 2) * self.hidden * self.ffn
        return attention + mlp

    @property
    def embedding_params(self) -> int:
        """Weights of the input embedding (and of an untied output projection): vocab x h."""
        return self.vocab * self.hidden

    @property
    def matmul_params(self) -> int:
        """Weights used in matrix multiplies: every layer's projections and the logit layer."""
        return self.layers * self.layer_params + self.embedding_params

    @property
    def params(self) -> int:
        """All weights, counting an untied input embedding."""
        return self.matmul_params + (0 if self.tied_embeddings else self.embedding_params)

    def flops_per_token(self, seq_len: int) -> float:
        """Training FLOPs per token, 6 N + 12 L h s (see trainstack.app.metrics.mfu)."""
        return 6.0 * self.matmul_params + 12.0 * self.layers * self.hidden * seq_len


# Sources, per model:
# - gpt3-5b, gpt3-175b: NVIDIA NeMo-Megatron-Launcher launcher_scripts/conf/training/gpt3/{5b,175b}.yaml
#   (num_layers, hidden_size, ffn_hidden_size = 4 h, num_attention_heads, init_method_std 0.01 and
#   0.006); the 175B shape is GPT-3's (Brown et al. 2020, table 2.1). Vocab: NeMo pads the GPT-2
#   BPE vocabulary (50257) to a multiple of make_vocab_size_divisible_by (128) x TP: 51200 at TP 8
#   (kept here, as in trainstack.app.metrics.mfu), 50304 at TP 1, under 0.1% of the 175B weights.
#   Tied embeddings. NeMo calls the 24 x 4096 model "5B" (gpt3/5b.yaml; 5.04e9 weights here).
# - llama3.1-8b, llama3.1-70b, llama3.1-405b: the Llama 3.1 model cards / config.json, and NeMo
#   nemo/collections/llm/gpt/model/llama.py (Llama31Config8B, Llama31Config70B, Llama31Config405B): GQA with 8
#   query groups, SwiGLU, untied, vocab 128256, context 131072. Llama 3 70B has 3.1 70B's shape.
#   No dropout: NVIDIA/NeMo v2.4.0 nemo/collections/llm/gpt/model/llama.py Llama3Config
#   hidden_dropout = attention_dropout = 0.0 (the recipes' model), as NVIDIA-NeMo/Megatron-Bridge
#   2afd2d3 src/megatron/bridge/models/llama/llama_provider.py Llama3ModelProvider sets them.
# - pythia-6.9b: Lightning-AI/litgpt at 6178c7cc, lit_gpt/config.py: `dict(org="EleutherAI",
#   name="pythia-6.9b", block_size=2048, n_layer=32, padding_multiple=256)` over the Config
#   defaults n_embd 4096, n_head 32, intermediate_size 4 * n_embd, vocab_size 50254 (padded to
#   50432), parallel_residual True; lit_gpt/model.py has a separate lm_head (untied) and rotary
#   embeddings (rotary_percentage 0.25 of each head; the rotated Q and K are whole new tensors).
# - Rotary embeddings: Llama 3.1 (rope_theta in config.json; NeMo Llama31Config position_embedding_type
#   "rope"); GPT-3 and GPT-2 learn absolute positions.
# - gpt2-small: stanford-crfm/mistral at bf9eff0, src/util/registry.py maps "gpt2-small" and
#   "mistral-small" to Hugging Face "gpt2" (12 layers, n_embd 768, 12 heads, vocab 50257, n_ctx 1024,
#   tied); conf/models/mistral-small.yaml sets seq_len 1024.
# - gpt2-micro: stanford-crfm/mistral at bf9eff0, conf/models/mistral-micro.json (and the identical
#   tests/conf/models/gpt2-micro.json, formerly conf/models/gpt2-micro.json): n_layer 2, n_embd 768,
#   n_head 2, n_inner null (4 * 768), n_ctx 256, vocab 50257; seq_len 256 in mistral-micro.yaml.
MODELS: dict[str, ModelShape] = {
    m.name: m
    for m in (
        ModelShape("gpt3-5b", 24, 4096, 16384, 32, 32, 51200, gated_mlp=False, tied_embeddings=True, max_seq_length=2048, init_method_std=0.01),
        ModelShape("gpt3-175b", 96, 12288, 49152, 96, 96, 51200, gated_mlp=False, tied_embeddings=True, max_seq_length=2048, init_method_std=0.006),
        ModelShape(
            "llama3.1-70b",
            80,
            8192,
            28672,
            64,
            8,
            128256,
            gated_mlp=True,
            tied_embeddings=False,
            max_seq_length=131072,
            dropout=False,
            rotary=True,
            aliases=("llama3-70b",),
        ),
        ModelShape(
            "llama3.1-8b",
            32,
            4096,
            14336,
            32,
            8,
            128256,
            gated_mlp=True,
            tied_embeddings=False,
            max_seq_length=131072,
            dropout=False,
            rotary=True,
            aliases=("llama3-8b",),
        ),
        ModelShape(
            "llama3.1-405b", 126, 16384, 53248, 128, 8, 128256, gated_mlp=True, tied_embeddings=False, max_seq_length=131072, dropout=False, rotary=True
        ),
        ModelShape(
            "pythia-6.9b", 32, 4096, 16384, 32, 32, 50432, gated_mlp=False, tied_embeddings=False, max_seq_length=2048, parallel_residual=True, rotary=True
        ),
        ModelShape("gpt2-small", 12, 768, 3072, 12, 12, 50257, gated_mlp=False, tied_embeddings=True, max_seq_length=1024, aliases=("mistral-small",)),
        ModelShape("gpt2-micro", 2, 768, 3072, 2, 2, 50257, gated_mlp=False, tied_embeddings=True, max_seq_length=256, aliases=("mistral-micro",)),
    )
}


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def model_shape(name: str) -> ModelShape:
    """The shape of `name` (case and punctuation ignored: `Llama31_405B` works), else CatalogError."""
    for shape in MODELS.values():
        if _key(name) in {_key(n) for n in (shape.name, *shape.aliases)}:
            return shape
    raise CatalogError(f"unknown model {name!r}; known: {', '.join(sorted(MODELS))}")
