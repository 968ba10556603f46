from clinbench.cli import main

main()
