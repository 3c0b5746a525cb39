# SPDX-License-Identifier: GPL-2.0
"""bcoz's launcher and profile tools, in modules:

  profile   reading a profile (COZ's text format)
  analysis  experiments to predicted program speedups
  report    the text report and the HTML page of `bcoz plot`
  classes   sample classes, perf's names (shared with the runtime)
  target    what bcoz run can tell about the program before running it
  cli       the command line: bcoz run, bcoz plot

Nothing is imported here, so `bcoz run` loads only what it needs.
"""
