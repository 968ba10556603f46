"""What runs an agent: model clients, the tool loop, coding-agent CLIs, built-ins, the sandbox."""
