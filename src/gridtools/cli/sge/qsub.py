def main(argv, prog="qsub"):
    print("hello", argv)
