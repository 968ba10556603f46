OFFLINE_AGENTS: tuple[str, ...] = ()


def make_offline_agent(spec, case):
    raise ValueError(spec)
