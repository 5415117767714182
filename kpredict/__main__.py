from kpredict.cli import main

main()
