"""The web panel: the robot in a web page (`cube-robot panel`, docs/panel.md)."""
