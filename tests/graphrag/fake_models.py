"""LangChain fake chat models for the graphrag tests: our own logic behind the chat-model API.

Neither is a real model and no result from them is reported as one: they check that the
LangChain paths (extraction, the tool-calling agent) are wired correctly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from environments.graphrag.agents import answer_chain
from environments.graphrag.corpus import Document
from environments.graphrag.lexicon import LexiconExtractor
from environments.graphrag.parse import interpret


class LexiconExtractorModel(BaseChatModel):
    """Replies to an extraction prompt with the triples the rule-based extractor reads in the
    chunk's text (no title, so pronouns stay unresolved: a chunk is all an LLM is sent), in the
    format the system prompt asks for (GraphRAG-shaped records, or JSON)."""

    relations: list[str]
    garble_every: int = 0
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "graphrag-lexicon-extractor"

    def _generate(self, messages: Sequence[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.calls += 1
        if self.garble_every and self.calls % self.garble_every == 0:
            content = "Sorry, here are the facts: [unclosed"
        else:
            found = chunk_triples(messages[-1].content, self.relations)
            if "<|>" in messages[0].content:  # the GraphRAG-shaped prompt: tuple records
                names = dict.fromkeys(n for s in found for n in (s.head, s.tail))
                content = "##".join([*(f'("entity"<|>{n}<|>thing)' for n in names),
                                     *(f'("relationship"<|>{s.head}<|>{s.relation}<|>{s.tail}<|>'
                                       f'{"no longer" if s.negated else "current"}<|>{s.dated})' for s in found)])
                content += "<|COMPLETE|>"
            else:
                triples = [{"head": s.head, "relation": s.relation, "tail": s.tail, "negated": s.negated,
                            "date": s.dated} for s in found]
                content = "```json\n" + json.dumps({"triples": triples}) + "\n```"
        msg = AIMessage(content=content, usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15})
        return ChatResult(generations=[ChatGeneration(message=msg)])


def chunk_triples(text: str, relations: Sequence[str]) -> list:
    """The rule-based extractor's triples for a chunk read alone (unresolved pronouns dropped)."""
    doc = Document("x", "", [s if s.endswith(".") else s + "." for s in text.split(". ")])
    return [s for s in LexiconExtractor(relations)([doc]) if s.head and s.tail]


class ReaderToolModel(BaseChatModel):
    """Calls search_entities on the question, local_search on its own reading of it, then
    answers from the tool's result."""

    @property
    def _llm_type(self) -> str:
        return "graphrag-reader-tools"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ReaderToolModel:
        return self

    def _generate(self, messages: Sequence[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        question = next(json.loads(m.content) for m in messages if isinstance(m, HumanMessage))
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            call = {"name": "search_entities", "args": {"text": question["question"]}, "id": "call-1"}
        else:
            entities = json.loads(results[0].content).get("entities", [])
            reading = interpret(question["question"], entities, question["schema"], question.get("glosses"))
            if len(results) == 1:
                call = {"name": "local_search", "args": {"entity": reading.topic, "relations": list(reading.plan)},
                        "id": "call-2"}
            else:
                rows = json.loads(results[-1].content).get("statements", [])
                answer = answer_chain(rows, reading.topic, reading.plan) or "unknown"
                call = {"name": "answer", "args": {"answer": answer}, "id": f"call-{len(results) + 1}"}
        msg = AIMessage(content="confidence: 0.9", tool_calls=[call],
                        usage_metadata={"input_tokens": 20, "output_tokens": 8, "total_tokens": 28})
        return ChatResult(generations=[ChatGeneration(message=msg)])
