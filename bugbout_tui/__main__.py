from bugbout_tui.cli import main

raise SystemExit(main())
