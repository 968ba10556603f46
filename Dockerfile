# The agent image for `clinbench run --sandbox docker`: the toolbox (a `duckdb` command and a
# python3 with the `duckdb` module, the same version as the harness's) and the agent CLIs.
# Build from the repository root:  docker build -t clinbench-agent:latest .
# (the duckdb version must be the harness's own, so both read the same storage format:
#  --build-arg DUCKDB_VERSION=$(python -c "import duckdb; print(duckdb.__version__)") for another)
FROM python:3.11-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash ca-certificates nodejs npm \
 && rm -rf /var/lib/apt/lists/*
ARG DUCKDB_VERSION=2.0.1
RUN pip install --no-cache-dir "duckdb==${DUCKDB_VERSION}"
COPY src/clinbench/agents/duckdb_shell.py /opt/clinbench/duckdb_shell.py
RUN printf '#!/bin/sh\nexec python3 /opt/clinbench/duckdb_shell.py "$@"\n' > /usr/local/bin/duckdb \
 && chmod 755 /usr/local/bin/duckdb
RUN npm install -g --no-audit --no-fund @openai/codex @anthropic-ai/claude-code && npm cache clean --force
# `--sandbox docker` (clinbench.agents.sandbox.DockerSandbox) uses this image only when a Docker
# engine answers, the image exists and a probe container runs as a non-root user; otherwise it
# uses bubblewrap. Per run the container is named (clinbench-<random>, killed by name at the
# timeout), has no network (only the egress socket, mounted), a read-only root, a size-limited
# /tmp, memory/pids/file-size limits, and gets its environment (API keys included) from an
# env-file, never on the command line.
# The agent never runs as root: uid 1000 (clinbench.agents.sandbox.DOCKER_UID) owns the workspace.
RUN useradd --uid 1000 --create-home --shell /bin/sh agent
USER agent
WORKDIR /workspace
