# citewise in a container: the API, the chat page and MCP, with the embedding model inside.
# Build: docker build -t citewise .    Run: docker compose up (see compose.yaml)
# The install and start steps are docker/install.sh and docker/start.sh, the same scripts CI
# runs outside a container (docker/smoke.sh).
FROM python:3.11-slim AS wheel
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 citewise && mkdir /data && chown citewise /data
COPY docker/install.sh docker/start.sh /opt/citewise-docker/
COPY --from=wheel /wheels /wheels
RUN bash /opt/citewise-docker/install.sh "$(ls /wheels/citewise-*.whl)" /opt/citewise \
    && rm -rf /wheels
ENV PATH=/opt/citewise/bin:$PATH \
    CITEWISE_VENV=/opt/citewise \
    CITEWISE_HOME=/data \
    PYTHONUNBUFFERED=1
VOLUME /data
USER citewise
EXPOSE 8000
# The start period covers indexing the mounted docs before the server starts.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15m \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"
CMD ["bash", "/opt/citewise-docker/start.sh"]
