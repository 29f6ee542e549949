"""Tokenizers built offline from a small vocabulary written to a temporary folder.

The public demos download a pretrained tokenizer; these give the same kind of object (a
`transformers` fast tokenizer returning a BatchEncoding) without the network.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

WORDS = ("the a an of to in and is was for on as with by at from that which who what when where game team "
         "football league champion season won lost played stadium city california bay area super bowl title "
         "american national conference denver broncos carolina panthers my name thomas main goal it be this "
         "are were has have had not but or so if then than there their they he she we you i me our").split()
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@functools.cache
def _vocab_file() -> str:
    folder = Path(tempfile.mkdtemp(prefix="clients_vocab_"))
    path = folder / "vocab.txt"
    path.write_text("\n".join(SPECIAL + sorted(set(WORDS)) + [str(i) for i in range(10)]) + "\n")
    return str(path)


def vocab_size() -> int:
    return len(Path(_vocab_file()).read_text().split())


def bert_tokenizer():
    """A WordPiece BERT tokenizer ([CLS] ... [SEP], token_type_ids) over the small vocabulary."""
    from transformers import BertTokenizerFast

    return BertTokenizerFast(vocab_file=_vocab_file(), do_lower_case=True)


def distilbert_tokenizer():
    """Like bert_tokenizer, but without token_type_ids (DistilBERT's forward takes none)."""
    from transformers import DistilBertTokenizerFast

    return DistilBertTokenizerFast(vocab_file=_vocab_file(), do_lower_case=True)


def gpt2_style_tokenizer():
    """A word-level tokenizer with an end-of-text token, for causal language models."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = SPECIAL + sorted(set(WORDS)) + [str(i) for i in range(10)] + ["<|endoftext|>"]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    from tokenizers import decoders

    core.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    return PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                   unk_token="[UNK]")


def byte_level_bpe_tokenizer():
    """A GPT-2-style byte-level BPE tokenizer trained on the vocabulary above (about 300 tokens), for what
    needs real sub-word text: stop strings, streamers."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    core = ByteLevelBPETokenizer()
    sentences = [" ".join(WORDS[i:i + 7]) for i in range(0, len(WORDS), 3)]
    core.train_from_iterator(sentences, vocab_size=300, min_frequency=1, special_tokens=["<|endoftext|>"],
                             show_progress=False)
    return PreTrainedTokenizerFast(tokenizer_object=core._tokenizer, eos_token="<|endoftext|>",
                                   pad_token="<|endoftext|>", bos_token="<|endoftext|>")
