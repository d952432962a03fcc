"""GPU models: memory and peak dense tensor throughput.

Sources, by record:
- h100, h200: NVIDIA H100 SXM datasheet, 989 TFLOPS BF16/FP16 dense, 1,979 FP8 dense (the recipes' MFU
  tool uses 1978); H200 has the same tensor cores as H100 SXM. Memory as nvidia-smi reports it: H100 80GB
  81559 MiB (NVIDIA/nccl#1264), H200 143771 MiB.
- a100, a100-80gb: A100 datasheet, 312 BF16/FP16 dense, no FP8; A100 40GB 40960 MiB, A100 80GB 81920 MiB
  ("80 GB" is about 85.5e9 bytes, not 80e9).
- b200: NVIDIA HGX B200 datasheet, 8 GPUs 36 PFLOPS FP16/BF16 and 72 PFLOPS FP8 with sparsity, so 2,250
  and 4,500 dense per GPU; nvidia-smi on a4-highgpu-8g reports 183359 MiB.
- gb200 (A4X): NVIDIA's GB200 NVL72 specifications (nvidia.com/en-us/data-center/gb200-nvl72, per rack of
  72 GPUs, with sparsity: FP16/BF16 360 PFLOPS, FP8 720 PFLOPS): 2,500 and 5,000 dense TFLOPS per GPU.
  Memory as nvidia-smi reports it on GB200 nodes: 189471 MiB, in every public nvidia-smi table of a GB200
  found (several, in the stored GitHub index, whose repositories it does not name), 185 GiB, which Google
  rounds to 186 GB a GPU (cloud.google.com/compute/docs/instances/arm-on-compute, A4X).
- gb300 (A4X Max): NVIDIA's GB300 NVL72 specifications (nvidia.com/en-us/data-center/gb300-nvl72, per rack
  of 72 GPUs, with sparsity: FP16/BF16 360 PFLOPS, FP8 720 PFLOPS), the same dense 2,500 and 5,000 TFLOPS a
  GPU as GB200 (Blackwell Ultra raises FP4 and attention, not these). Memory: Compute Engine gives "roughly
  279 GB per GPU" (1,116 GB for the four; cloud.google.com/compute/docs/accelerator-optimized-machines,
  "A4X Max machine types"); no public nvidia-smi total for a GB300 was found, so the memory check takes
  279e9 bytes rounded down to a MiB (266,075 MiB), Google's figure, below any the driver could report.
- rtx-pro-6000 (G4): NVIDIA RTX PRO 6000 Blackwell Server Edition, 96 GB GDDR7; dense BF16/FP16 tensor
  503.8 TFLOPS with FP32 accumulate, FP8 1,007.6 (NVIDIA's "4 PFLOPS FP4 with sparsity", halved per
  precision and for sparsity, as the RTX Blackwell architecture tables list them). nvidia-smi reports
  97887 MiB on this GPU (a published host query of an RTX PRO 6000 Blackwell Server Edition, in the
  stored GitHub index, whose repository it does not name).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainstack.core.errors import CatalogError


@dataclass(frozen=True)
class Gpu:
    """An accelerator model.

    Attributes:
        name: the short name used by reports and `--accelerator-type` (h100, h200, a100).
        memory_mib: HBM per GPU as the driver reports it (`nvidia-smi --query-gpu=memory.total`).
        peak_tflops: peak dense tensor TFLOPS per GPU by precision (no sparsity).
    """

    name: str
    memory_mib: int
    peak_tflops: dict[str, float]

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * 2**20

    def peak(self, precision: str) -> float:
        """Peak dense TFLOPS at `precision`, or a CatalogError naming the ones it has."""
        try:
            return self.peak_tflops[precision]
        except KeyError:
            known = ", ".join(sorted(self.peak_tflops))
            raise CatalogError(f"{self.name} has no {precision} tensor peak; it has: {known}") from None


GPUS: dict[str, Gpu] = {
    "gb300": Gpu("gb300", 266075, {"bf16": 2500.0, "fp16": 2500.0, "fp8": 5000.0}),  # GB300 NVL72 specifications; 279e9 bytes
    "rtx-pro-6000": Gpu("rtx-pro-6000", 97887, {"bf16": 503.8, "fp16": 503.8, "fp8": 1007.6}),  # RTX PRO 6000 Blackwell Server Edition
    "gb200": Gpu("gb200", 189471, {"bf16": 2500.0, "fp16": 2500.0, "fp8": 5000.0}),  # GB200 NVL72 specifications
    "b200": Gpu("b200", 183359, {"bf16": 2250.0, "fp16": 2250.0, "fp8": 4500.0}),  # HGX B200 datasheet
    "h200": Gpu("h200", 143771, {"bf16": 989.0, "fp16": 989.0, "fp8": 1979.0}),  # H100 SXM datasheet
    "h100": Gpu("h100", 81559, {"bf16": 989.0, "fp16": 989.0, "fp8": 1979.0}),  # H100 SXM datasheet; NVIDIA/nccl#1264
    "a100": Gpu("a100", 40960, {"bf16": 312.0, "fp16": 312.0}),  # A100 datasheet
    "a100-80gb": Gpu("a100-80gb", 81920, {"bf16": 312.0, "fp16": 312.0}),  # A100 datasheet
}
