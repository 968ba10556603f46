# The image an external agent runs in under `--sandbox docker` (clinbench.agents.sandbox.DockerSandbox).
#   docker build -t clinbench-agent:latest -f docker/agent.Dockerfile .
# clinbench uses it only when a Docker engine answers, this image exists, and a probe container
# runs as a non-root user; otherwise it uses bubblewrap. Per run the container is named
# (clinbench-<random>), has no network (only the egress socket, mounted), a read-only root, a
# size-limited /tmp, memory/pids/file-size limits, and gets its environment (API keys
# included) from an env-file, never on the command line. It is killed by name at the timeout.
FROM node:22-bookworm-slim

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# the agent CLIs; add the tools your agent needs here
RUN npm install -g --no-audit --no-fund @openai/codex @anthropic-ai/claude-code && npm cache clean --force

# the agent never runs as root: uid 1000 (clinbench.agents.sandbox.DOCKER_UID) owns the workspace
RUN userdel -r node 2>/dev/null; useradd --uid 1000 --create-home --shell /bin/sh agent
USER agent
WORKDIR /workspace
