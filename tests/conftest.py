import pytest

from grader import course, simulated


def pytest_report_header(config):
    return f"device-course: {len(course.load())} exercises; simulated accelerator supported: {simulated.is_supported()}"


@pytest.fixture(scope="session")
def exercises():
    return course.load()
