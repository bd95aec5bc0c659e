"""The exact prompt each next-edit format renders for one fixed situation, and its
length in the packaged model's tokens.

Changing a literal here is a deliberate act: it changes what a model is shown, so it
invalidates the weights trained on that format. The `shadowtab` format is what the
shipped adapter (`inference/adapters/*.gguf`, and the ghost-text gate fitted for it) was
trained on: changing its prompt means retraining the adapter (training/README.md) and
refitting the gate. `zeta` is the layout of Zed's Zeta models, `sweep` of Sweep's
next-edit models and `generic` is for a plain instruct or base model (the packaged
SmolLM2 without the adapter): changing those moves their prompts away from what those
models were trained or measured on. Update a literal only together with that decision,
and say so in the commit message.

The situation: a small file, two completed edits in it (a new parameter, then its use),
and an edit being typed on a third line with the cursor at its end.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import llama_cpp
import pytest
from shadowtab.inference import default_model_path
from shadowtab.inference.engines.api import ModelLoadError
from shadowtab.inference.next_edit.formats import FORMATS
from shadowtab.inference.next_edit.situation import EditInProgress, PastEdit, Situation

PATH = "shop/cart.py"
ORIGINAL = (
    '"""A shopping cart."""\n'
    "\n"
    "\n"
    "class Cart:\n"
    "    def __init__(self):\n"
    "        self.items = []\n"
    "\n"
    "    def add(self, item, price):\n"
    "        self.items.append((item, price))\n"
    "\n"
    "    def total(self):\n"
    "        return sum(price for _, price in self.items)\n"
    "\n"
    "\n"
    "def checkout(cart):\n"
    "    return cart.total()\n"
    "\n"
    "\n"
    "def receipt(cart):\n"
    '    return [f"{item}: {price}" for item, price in cart.items]\n'
    "\n"
    "\n"
    'if __name__ == "__main__":\n'
    "    print(checkout(Cart()))\n"
)
WITH_PARAMETER = ORIGINAL.replace("price):", "price, quantity=1):")
WITH_USE = WITH_PARAMETER.replace("append((item, price))", "append((item, price, quantity))")
TYPED = " * quantity"
TYPED_AT = WITH_USE.index("sum(price") + len("sum(price")
NOW = WITH_USE[:TYPED_AT] + TYPED + WITH_USE[TYPED_AT:]
SITUATION = Situation(
    PATH,
    NOW,
    TYPED_AT + len(TYPED),
    EditInProgress(TYPED_AT, "", TYPED),
    (PastEdit(PATH, ORIGINAL, WITH_PARAMETER), PastEdit(PATH, WITH_PARAMETER, WITH_USE)),
)

GENERIC_PROMPT = (
    "# File: shop/cart.py\n"
    '"""A shopping cart."""\n'
    "\n"
    "\n"
    "class Cart:\n"
    "    def __init__(self):\n"
    "        self.items = []\n"
    "\n"
    "    def add(self, item, price, quantity=1):\n"
    "### Recent edits\n"
    "In shop/cart.py:\n"
    "-    def add(self, item, price):\n"
    "+    def add(self, item, price, quantity=1):\n"
    "In shop/cart.py:\n"
    "-        self.items.append((item, price))\n"
    "+        self.items.append((item, price, quantity))\n"
    "### Code\n"
    "```\n"
    "        self.items.append((item, price, quantity))\n"
    "\n"
    "    def total(self):\n"
    "        return sum(price for _, price in self.items)\n"
    "\n"
    "\n"
    "def checkout(cart):\n"
    "    return cart.total()\n"
    "\n"
    "```\n"
    "### Below\n"
    "```\n"
    "\n"
    "def receipt(cart):\n"
    '    return [f"{item}: {price}" for item, price in cart.items]\n'
    "\n"
    "\n"
    'if __name__ == "__main__":\n'
    "```\n"
    "### Edit in progress\n"
    "```diff\n"
    "-        return sum(price for _, price in self.items)\n"
    "+        return sum(price * quantity for _, price in self.items)\n"
    "```\n"
    "### Updated code\n"
    "```\n"
)
GENERIC_TOKENS = 267

SHADOWTAB_PROMPT = (
    "<filename>shop/cart.py\n"
    '"""A shopping cart."""\n'
    "\n"
    "\n"
    "class Cart:\n"
    "    def __init__(self):\n"
    "        self.items = []\n"
    "\n"
    "    def add(self, item, price, quantity=1):\n"
    "<issue_start>shop/cart.py\n"
    "@@ -7,3 +7,3 @@\n"
    " \n"
    "-    def add(self, item, price):\n"
    "+    def add(self, item, price, quantity=1):\n"
    "         self.items.append((item, price))\n"
    "shop/cart.py\n"
    "@@ -8,3 +8,3 @@\n"
    "     def add(self, item, price, quantity=1):\n"
    "-        self.items.append((item, price))\n"
    "+        self.items.append((item, price, quantity))\n"
    " \n"
    "<jupyter_start>        self.items.append((item, price, quantity))\n"
    "\n"
    "    def total(self):\n"
    "        return sum(price for _, price in self.items)\n"
    "\n"
    "\n"
    "def checkout(cart):\n"
    "    return cart.total()\n"
    "\n"
    "\n"
    "<jupyter_text>def receipt(cart):\n"
    '    return [f"{item}: {price}" for item, price in cart.items]\n'
    "\n"
    "\n"
    'if __name__ == "__main__":\n'
    "    print(checkout(Cart()))\n"
    "<issue_comment>-        return sum(price for _, price in self.items)\n"
    "+        return sum(price * quantity for _, price in self.items)\n"
    "<jupyter_code>"
)
SHADOWTAB_TOKENS = 290

SWEEP_PROMPT = (
    "<|file_sep|>shop/cart.py\n"
    '"""A shopping cart."""\n'
    "<|file_sep|>shop/cart.py.diff\n"
    "original:\n"
    "    def add(self, item, price):\n"
    "updated:\n"
    "    def add(self, item, price, quantity=1):\n"
    "<|file_sep|>shop/cart.py.diff\n"
    "original:\n"
    "        self.items.append((item, price))\n"
    "updated:\n"
    "        self.items.append((item, price, quantity))\n"
    "<|file_sep|>original/shop/cart.py\n"
    "\n"
    "\n"
    "class Cart:\n"
    "    def __init__(self):\n"
    "        self.items = []\n"
    "\n"
    "    def add(self, item, price, quantity=1):\n"
    "        self.items.append((item, price, quantity))\n"
    "\n"
    "    def total(self):\n"
    "        return sum(price for _, price in self.items)\n"
    "\n"
    "\n"
    "def checkout(cart):\n"
    "    return cart.total()\n"
    "\n"
    "\n"
    "def receipt(cart):\n"
    '    return [f"{item}: {price}" for item, price in cart.items]\n'
    "\n"
    "\n"
    "<|file_sep|>shop/cart.py.diff\n"
    "original:\n"
    "        return sum(price for _, price in self.items)\n"
    "updated:\n"
    "        return sum(price * quantity for _, price in self.items)\n"
    "<|file_sep|>updated/shop/cart.py\n"
)
SWEEP_TOKENS = 292

ZETA_PROMPT = (
    "### Instruction:\n"
    "You are a code completion assistant and your task is to analyze user edits and "
    "then rewrite an excerpt that the user provides, suggesting the appropriate "
    "edits within the excerpt, taking into account the cursor location.\n"
    "\n"
    "### User Excerpt:\n"
    "\n"
    "```shop/cart.py\n"
    "<|start_of_file|>\n"
    '"""A shopping cart."""\n'
    "\n"
    "\n"
    "class Cart:\n"
    "    def __init__(self):\n"
    "        self.items = []\n"
    "\n"
    "<|editable_region_start|>\n"
    "    def add(self, item, price, quantity=1):\n"
    "        self.items.append((item, price, quantity))\n"
    "\n"
    "    def total(self):\n"
    "        return sum(price<|user_cursor_is_here|> for _, price in self.items)\n"
    "\n"
    "\n"
    "def checkout(cart):\n"
    "    return cart.total()\n"
    "\n"
    "\n"
    "def receipt(cart):\n"
    '    return [f"{item}: {price}" for item, price in cart.items]\n'
    "<|editable_region_end|>\n"
    "\n"
    "\n"
    'if __name__ == "__main__":\n'
    "    print(checkout(Cart()))\n"
    "```\n"
    "\n"
    "### User Edits:\n"
    "\n"
    'User edited "shop/cart.py":\n'
    "```diff\n"
    "@@ -1 +1 @@\n"
    "-    def add(self, item, price):\n"
    "+    def add(self, item, price, quantity=1):\n"
    "```\n"
    "\n"
    'User edited "shop/cart.py":\n'
    "```diff\n"
    "@@ -1 +1 @@\n"
    "-        self.items.append((item, price))\n"
    "+        self.items.append((item, price, quantity))\n"
    "```\n"
    "\n"
    'User edited "shop/cart.py":\n'
    "```diff\n"
    "@@ -1 +1 @@\n"
    "-        return sum(price for _, price in self.items)\n"
    "+        return sum(price * quantity for _, price in self.items)\n"
    "```\n"
    "\n"
    "### Response:\n"
    "<|editable_region_start|>\n"
)
ZETA_TOKENS = 415


class Golden(NamedTuple):
    prompt: str
    tokens: int  # in the packaged model's tokens, as the engine tokenizes a prompt


GOLDEN = {
    "generic": Golden(GENERIC_PROMPT, GENERIC_TOKENS),
    "shadowtab": Golden(SHADOWTAB_PROMPT, SHADOWTAB_TOKENS),
    "sweep": Golden(SWEEP_PROMPT, SWEEP_TOKENS),
    "zeta": Golden(ZETA_PROMPT, ZETA_TOKENS),
}


def test_every_format_has_a_golden_prompt() -> None:
    assert sorted(GOLDEN) == sorted(FORMATS)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_prompt_is_exactly_the_golden_text(name: str) -> None:
    rendered = FORMATS[name].render(SITUATION)
    assert rendered is not None
    assert rendered.prompt == GOLDEN[name].prompt


@pytest.fixture(scope="module")
def packaged_vocabulary() -> Iterator[llama_cpp.Llama]:
    """The packaged model's tokenizer alone (llama.cpp's vocab-only load: no weights)."""
    try:
        path = default_model_path()
    except ModelLoadError as missing:
        pytest.skip(f"no packaged model to count tokens with: {missing}")
    vocabulary = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)
    yield vocabulary
    vocabulary.close()


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_prompt_has_the_golden_token_count(
    name: str, packaged_vocabulary: llama_cpp.Llama
) -> None:
    # As the engine tokenizes a prompt: control-token text parsed, BOS as the vocabulary says.
    tokens = packaged_vocabulary.tokenize(GOLDEN[name].prompt.encode(), add_bos=True, special=True)
    assert len(tokens) == GOLDEN[name].tokens
