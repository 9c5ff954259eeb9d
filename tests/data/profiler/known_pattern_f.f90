! A Fortran (`use mpi`) program with a known pattern, for tests/test_profiler.py:
!   ring       MPI_SEND 100 integer(4) (400 B) to r+1 (rank 0 sends first)
!   halo       MPI_ISEND 8 double precision (64 B) to r-1, twice
!   pairs      MPI_SENDRECV 3 integer(4) (12 B) with r+2 (mod p)
!   persistent MPI_SEND_INIT 5 double precision (40 B) to r+1; MPI_START once, MPI_STARTALL twice
!   split      MPI_COMM_SPLIT by parity, key -r (reversed): MPI_SENDRECV 6 characters to sub-rank s+1
! Run with p >= 4 ranks.
program known_pattern_f
  use mpi
  implicit none
  integer :: r, p, ierr, i, s, n, sub, req(2), reqs(4)
  integer :: ring(100), three(3), three_in(3)
  double precision :: eight(8), eight_in(8, 2), five(5), five_in(5)
  character(len=6) :: six, six_in
  integer :: st(MPI_STATUS_SIZE)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, r, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, p, ierr)
  ring = 0; three = 0; eight = 0d0; five = 0d0; six = 'abcdef'

  if (r == 0) then
     call MPI_SEND(ring, 100, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, ierr)
     call MPI_RECV(ring, 100, MPI_INTEGER, p - 1, 0, MPI_COMM_WORLD, st, ierr)
  else
     call MPI_RECV(ring, 100, MPI_INTEGER, r - 1, 0, MPI_COMM_WORLD, st, ierr)
     call MPI_SEND(ring, 100, MPI_INTEGER, mod(r + 1, p), 0, MPI_COMM_WORLD, ierr)
  end if

  do i = 1, 2
     call MPI_IRECV(eight_in(1, i), 8, MPI_DOUBLE_PRECISION, mod(r + 1, p), i, MPI_COMM_WORLD, reqs(1), ierr)
     call MPI_ISEND(eight, 8, MPI_DOUBLE_PRECISION, mod(r - 1 + p, p), i, MPI_COMM_WORLD, reqs(2), ierr)
     call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
  end do

  call MPI_SENDRECV(three, 3, MPI_INTEGER, mod(r + 2, p), 3, three_in, 3, MPI_INTEGER, mod(r - 2 + p, p), 3, &
                    MPI_COMM_WORLD, st, ierr)

  call MPI_SEND_INIT(five, 5, MPI_DOUBLE_PRECISION, mod(r + 1, p), 4, MPI_COMM_WORLD, req(1), ierr)
  call MPI_RECV_INIT(five_in, 5, MPI_DOUBLE_PRECISION, mod(r - 1 + p, p), 4, MPI_COMM_WORLD, req(2), ierr)
  call MPI_START(req(1), ierr)
  call MPI_START(req(2), ierr)
  call MPI_WAITALL(2, req, MPI_STATUSES_IGNORE, ierr)
  do i = 1, 2
     call MPI_STARTALL(2, req, ierr)
     call MPI_WAITALL(2, req, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_REQUEST_FREE(req(1), ierr)
  call MPI_REQUEST_FREE(req(2), ierr)

  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(r, 2), -r, sub, ierr)
  call MPI_COMM_RANK(sub, s, ierr)
  call MPI_COMM_SIZE(sub, n, ierr)
  call MPI_SENDRECV(six, 6, MPI_CHARACTER, mod(s + 1, n), 5, six_in, 6, MPI_CHARACTER, mod(s - 1 + n, n), 5, &
                    sub, st, ierr)
  call MPI_COMM_FREE(sub, ierr)

  call MPI_FINALIZE(ierr)
end program known_pattern_f
