from dusize import describe, directory_size


def test_sizes_are_summed_over_subdirectories(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"x" * 1000)
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "b.bin").write_bytes(b"x" * 500)
    assert directory_size(tmp_path) == 1500


def test_a_size_reads_in_kilobytes(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"x" * 1500)
    assert describe(photos) == "photos: 1.5 kB"
    assert describe(photos, binary=True) == "photos: 1.5 KiB"
