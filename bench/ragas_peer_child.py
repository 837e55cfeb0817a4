"""The ragas library's side of bench_ragas_peer.py; runs in its own virtualenv (never qatui's).

Run by bench_ragas_peer.py as: RAGAS_PYTHON ragas_peer_child.py BASE_URL ITEMS.json CACHE_DIR WORKERS
Evaluates faithfulness and answer relevancy (ragas' legacy `evaluate` API, LangChain's OpenAI
clients pointed at the loopback server for both chat and embeddings, ragas' own disk cache)
and prints one JSON line: wall and CPU seconds of `evaluate`, and the mean scores.
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")


def main(base_url: str, items_path: str, cache_dir: str, workers: int) -> None:
    """One `evaluate` over the items; a second call with the same cache is the cached rerun."""
    from datasets import Dataset
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings
    from ragas import RunConfig, evaluate
    from ragas.cache import DiskCacheBackend
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import answer_relevancy, faithfulness

    items = json.load(open(items_path, encoding="utf-8"))
    data = Dataset.from_dict({"user_input": [i["question"] for i in items],
                              "response": [i["answer"] for i in items],
                              "retrieved_contexts": [[i["context"]] for i in items]})
    cache = DiskCacheBackend(cache_dir)
    llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o-mini", base_url=base_url, api_key="sk-bench-loopback",
                                         temperature=0.0), cache=cache)
    embeddings = LangchainEmbeddingsWrapper(OpenAIEmbeddings(model="text-embedding-3-small", base_url=base_url,
                                                             api_key="sk-bench-loopback",
                                                             check_embedding_ctx_length=False), cache=cache)
    started, cpu = time.perf_counter(), time.process_time()
    result = evaluate(data, metrics=[faithfulness, answer_relevancy], llm=llm, embeddings=embeddings,
                      run_config=RunConfig(max_workers=workers, timeout=120), show_progress=False)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    frame = result.to_pandas()
    print(json.dumps({"wall": wall, "cpu": cpu, "faithfulness": float(frame["faithfulness"].mean()),
                      "answer_relevancy": float(frame["answer_relevancy"].mean()),
                      "missing": int(frame[["faithfulness", "answer_relevancy"]].isna().sum().sum())}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
