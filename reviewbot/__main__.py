from reviewbot.entry import main

main()
