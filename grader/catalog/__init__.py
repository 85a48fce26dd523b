"""The course's metadata: course.toml's exercises (course) and the book sections that explain them (book_links).
The lowest layer above the simulated accelerator: it imports no other part of the grader."""
