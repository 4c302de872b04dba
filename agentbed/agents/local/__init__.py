"""A real model in the loop, offline: a GGUF file served by llama.cpp (the ``xllamacpp`` wheel)
on loopback, reached through LangChain's ``ChatOpenAI`` like any OpenAI-compatible provider.

- :mod:`.weights`: which file ``local:NAME`` names, and installing the known ones;
- :mod:`.server`: one server per run (:func:`serving`), its process and log;
- :mod:`.watch`: a run's servers kept alive (one restart), or the run's reason to stop;
- :mod:`.profile`: the compact profile (:class:`LocalProfile`), a chat agent's reply format.

Importing this package loads neither the runtime nor the weights.
"""
