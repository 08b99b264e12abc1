"""How tests/data/gguf was made (run once by hand; not part of the suite). Needs torch,
transformers, sentencepiece, and llama.cpp's sources as llama-cpp-python 0.3.36's sdist
vendors them (`pip download --no-binary :all: --no-deps llama-cpp-python`).

1. This script: a random 1-layer Llama (hidden 256, intermediate 256, 4 heads, 2 KV heads, vocab
   512, seed 0) saved in F16 to tiny-llama/, with a 512-piece sentencepiece BPE tokenizer.
2. In vendor/llama.cpp:
       PYTHONPATH=gguf-py python convert_hf_to_gguf.py tiny-llama --outtype f16  --outfile tiny-llama-F16.gguf
       PYTHONPATH=gguf-py python convert_hf_to_gguf.py tiny-llama --outtype q8_0 --outfile tiny-llama-Q8_0.gguf
   then, where llama-quantize was built (cmake -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF
   -DBUILD_SHARED_LIBS=OFF; cmake --build build --target llama-quantize):
       build/bin/llama-quantize tiny-llama-F16.gguf tiny-llama-<TYPE>.gguf <TYPE>
3. tokenizer.model is not kept (the tests need the weights only).
"""

import random
import sys

import sentencepiece as spm
import torch
import transformers

out = sys.argv[1] if len(sys.argv) > 1 else "tiny-llama"
torch.manual_seed(0)
random.seed(0)
words = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "model",
    "weight",
    "tensor",
    "layer",
    "head",
    "attention",
]
with open("corpus.txt", "w") as f:
    for i in range(5000):
        f.write(" ".join(random.choice(words) for _ in range(12)) + f" {i}\n")
spm.SentencePieceTrainer.train(
    input="corpus.txt", model_prefix=f"{out}/tokenizer", vocab_size=512, model_type="bpe",
    bos_id=1, eos_id=2, unk_id=0, pad_id=-1, character_coverage=1.0,
)  # fmt: skip
cfg = transformers.LlamaConfig(
    vocab_size=512, hidden_size=256, intermediate_size=256, num_hidden_layers=1,
    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
    tie_word_embeddings=False, bos_token_id=1, eos_token_id=2,
)  # fmt: skip
transformers.LlamaForCausalLM(cfg).half().save_pretrained(out, safe_serialization=True)
