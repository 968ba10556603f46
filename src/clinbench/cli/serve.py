"""`clinbench serve`: a local web app over campaign folders, and clinician mode for diagnosis cases.

The web stack (Starlette, Jinja2, uvicorn) is imported inside the command only, so
`clinbench --help` stays light.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Optional

import typer

LOOPBACK = "127.0.0.1"


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(
        folders: list[Path] = typer.Argument(None, help="campaign folders, or folders holding them (default: .)"),
        cases: str = typer.Option("demo", "--cases", help="cases to play: demo or a dataset.json"),
        play_out: Optional[Path] = typer.Option(
            None, "--play-out", help="dx store for the clinicians' encounters (default: the only dx-only store given, "
                                     "else FIRST_FOLDER/play)"),
        host: str = typer.Option(LOOPBACK, "--host", help="address to bind; anything but loopback needs the token"),
        port: int = typer.Option(8765, "--port", min=0, max=65535, help="port (0: any free one)"),
        no_token: bool = typer.Option(False, "--no-token", help="serve without an access token (loopback only)"),
        gatekeeper: str = typer.Option("offline", "--gatekeeper", help="clinician mode's gatekeeper: offline | llm"),
        gatekeeper_model: Optional[str] = typer.Option(None, "--gatekeeper-model", help="model of the llm gatekeeper"),
        gatekeeper_provider: str = typer.Option("openai", "--gatekeeper-provider", help="openai | anthropic"),
        gatekeeper_base_url: Optional[str] = typer.Option(None, "--gatekeeper-base-url", help="gatekeeper endpoint"),
        judge: str = typer.Option("offline", "--judge", help="clinician mode's judge: offline | llm"),
        judge_model: Optional[str] = typer.Option(None, "--judge-model", help="model of the llm judge"),
        judge_provider: str = typer.Option("openai", "--judge-provider", help="openai | anthropic"),
        judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url", help="judge endpoint"),
    ) -> None:
        """Browse every run of the campaigns under FOLDERS (stats, runs, transcripts, scores explained) and play
        diagnosis cases as a clinician; prints one URL with an access token."""
        from clinbench.agents.egress import is_loopback
        from clinbench.cli.dx import role_specs
        from clinbench.errors import ClinbenchError

        if no_token and not is_loopback(host):
            raise ClinbenchError(f"--host {host} is reachable from other machines: it needs the access token "
                                 "(drop --no-token)")
        import uvicorn

        from clinbench.serve.app import create_app
        from clinbench.serve.launch import prepare

        roles = role_specs({"gatekeeper": (gatekeeper_model, gatekeeper_provider, gatekeeper_base_url, None),
                            "judge": (judge_model, judge_provider, judge_base_url, None)}, [])
        sources, play = prepare(folders or [Path(".")], cases=cases, play_out=play_out, gatekeeper=gatekeeper,
                                judge=judge, roles=roles)
        if (gatekeeper == "llm" or judge == "llm") and any(not c.synthetic for c in play.cases(None)):
            typer.echo("note: these are credentialed MIMIC cases: PhysioNet's guidance on using MIMIC with language "
                       "models asks for a local model or a provider that does not retain or train on the data "
                       "(the gatekeeper and judge see the whole note).", err=True)
        token = None if no_token else secrets.token_urlsafe(24)
        config = uvicorn.Config(create_app(sources, token=token, play=play), host=host, port=port,
                                log_level="warning", access_log=False)
        server = uvicorn.Server(config)

        async def announce() -> None:  # the port is known once the socket is bound
            import asyncio

            while not server.started:
                await asyncio.sleep(0.05)
            bound = server.servers[0].sockets[0].getsockname()[1]
            shown = f"[{host}]" if ":" in host else host
            url = f"http://{shown}:{bound}/" + (f"?token={token}" if token else "")
            typer.echo(f"clinbench serve: {len(sources)} campaign store(s); clinician encounters go to "
                       f"{play.store_dir}\n    {url}\n(Ctrl-C stops it)", err=False)

        import asyncio

        async def main() -> None:
            await asyncio.gather(server.serve(), announce())

        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            pass
