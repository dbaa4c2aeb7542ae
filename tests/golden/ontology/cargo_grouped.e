## Nodes
CargoManagement|SYS|CargoManagement.SY.001|Central cargo management system
FleetControl|SYS|FleetControl.SY.002|Vehicle and driver control
OrderSystem|SYS|OrderSystem.SY.003|System for order management
Customer|ACTOR|Customer.AC.001|Customer placing orders
Dispatcher|ACTOR|Dispatcher.AC.002|Plans and assigns transports
Driver|ACTOR|Driver.AC.003|Drives the vehicle
WarehouseClerk|ACTOR|WarehouseClerk.AC.004|Handles goods in the warehouse
Carrier|ACTOR|Carrier.AC.005|External transport partner
ManageFleet|UC|ManageFleet.UC.001|Manage fleet operations
PlaceOrder|UC|PlaceOrder.UC.002|Customer places an order
TrackShipment|UC|TrackShipment.UC.003|Follow a shipment to delivery
PlanDelivery|UC|PlanDelivery.UC.004|Plan delivery tours
ManageWarehouse|UC|ManageWarehouse.UC.005|Keep stock and storage in order
InvoiceCustomer|UC|InvoiceCustomer.UC.006|Bill delivered orders
HandleReturns|UC|HandleReturns.UC.007|Take back returned goods
ScheduleMaintenance|UC|ScheduleMaintenance.UC.008|Keep vehicles serviceable
OptimizeRoutes|FUNC|OptimizeRoutes.FN.001|Computes optimal delivery routes
ParseInput|FUNC|ParseInput.FN.002|Parses user input data
ValidateOrder|FUNC|ValidateOrder.FN.003|Checks an order for completeness
ProcessPayment|FUNC|ProcessPayment.FN.004|Process customer payment
AssignVehicle|FUNC|AssignVehicle.FN.005|Assigns a vehicle to a tour
CalculateETA|FUNC|CalculateETA.FN.006|Estimates arrival times
ReserveStock|FUNC|ReserveStock.FN.007|Reserves goods for an order
PrintLabel|FUNC|PrintLabel.FN.008|Prints shipping labels
NotifyCustomer|FUNC|NotifyCustomer.FN.009|Sends status messages
RecordDelivery|FUNC|RecordDelivery.FN.010|Records proof of delivery
ComputeInvoice|FUNC|ComputeInvoice.FN.011|Computes invoice amounts
ReceiveReturn|FUNC|ReceiveReturn.FN.012|Books returned goods
PlanMaintenance|FUNC|PlanMaintenance.FN.013|Plans service intervals
MonitorVehicle|FUNC|MonitorVehicle.FN.014|Collects vehicle telemetry
ArchiveOrder|FUNC|ArchiveOrder.FN.015|Archives completed orders
RouteOptimality|REQ|RouteOptimality.RQ.001|Routes within 5 % of optimum
InputValidation|REQ|InputValidation.RQ.002|Reject malformed input
OrderCompleteness|REQ|OrderCompleteness.RQ.003|Orders need address and items
PaymentSecurity|REQ|PaymentSecurity.RQ.004|Payments use PCI-DSS compliant providers
FleetAvailability|REQ|FleetAvailability.RQ.005|90 % of vehicles available
ETAAccuracy|REQ|ETAAccuracy.RQ.006|ETA within 15 minutes
StockConsistency|REQ|StockConsistency.RQ.007|No overbooking of stock
LabelFormat|REQ|LabelFormat.RQ.008|Labels follow GS1
NotificationLatency|REQ|NotificationLatency.RQ.009|Notify within one minute
InvoiceCorrectness|REQ|InvoiceCorrectness.RQ.010|Invoices match deliveries
ReturnTraceability|REQ|ReturnTraceability.RQ.011|Every return is traceable

## Edges
CargoManagement.SY.001 -cp-> FleetControl.SY.002, OrderSystem.SY.003, ManageFleet.UC.001, TrackShipment.UC.003, PlanDelivery.UC.004, ManageWarehouse.UC.005
FleetControl.SY.002 -cp-> ScheduleMaintenance.UC.008
OrderSystem.SY.003 -cp-> PlaceOrder.UC.002, InvoiceCustomer.UC.006, HandleReturns.UC.007
Customer.AC.001 -io-> PlaceOrder.UC.002, TrackShipment.UC.003, InvoiceCustomer.UC.006, HandleReturns.UC.007
Dispatcher.AC.002 -io-> ManageFleet.UC.001, PlanDelivery.UC.004
Driver.AC.003 -io-> TrackShipment.UC.003, ScheduleMaintenance.UC.008
WarehouseClerk.AC.004 -io-> ManageWarehouse.UC.005, HandleReturns.UC.007
Carrier.AC.005 -io-> PlanDelivery.UC.004, ScheduleMaintenance.UC.008
ManageFleet.UC.001 -cp-> AssignVehicle.FN.005
ManageFleet.UC.001 -st-> FleetAvailability.RQ.005
PlaceOrder.UC.002 -cp-> ParseInput.FN.002, ValidateOrder.FN.003, ArchiveOrder.FN.015
PlaceOrder.UC.002 -st-> OrderCompleteness.RQ.003
TrackShipment.UC.003 -cp-> CalculateETA.FN.006, NotifyCustomer.FN.009, RecordDelivery.FN.010
TrackShipment.UC.003 -st-> ETAAccuracy.RQ.006
PlanDelivery.UC.004 -cp-> OptimizeRoutes.FN.001
ManageWarehouse.UC.005 -cp-> ReserveStock.FN.007, PrintLabel.FN.008
ManageWarehouse.UC.005 -st-> StockConsistency.RQ.007
InvoiceCustomer.UC.006 -cp-> ProcessPayment.FN.004, ComputeInvoice.FN.011
InvoiceCustomer.UC.006 -st-> InvoiceCorrectness.RQ.010
HandleReturns.UC.007 -cp-> ReceiveReturn.FN.012
HandleReturns.UC.007 -st-> ReturnTraceability.RQ.011
ScheduleMaintenance.UC.008 -cp-> PlanMaintenance.FN.013, MonitorVehicle.FN.014
OptimizeRoutes.FN.001 -st-> RouteOptimality.RQ.001
ParseInput.FN.002 -st-> InputValidation.RQ.002
ValidateOrder.FN.003 -st-> OrderCompleteness.RQ.003
ProcessPayment.FN.004 -st-> PaymentSecurity.RQ.004
AssignVehicle.FN.005 -st-> FleetAvailability.RQ.005
CalculateETA.FN.006 -st-> ETAAccuracy.RQ.006
ReserveStock.FN.007 -st-> StockConsistency.RQ.007
PrintLabel.FN.008 -st-> LabelFormat.RQ.008
NotifyCustomer.FN.009 -st-> NotificationLatency.RQ.009
RecordDelivery.FN.010 -st-> InvoiceCorrectness.RQ.010
ComputeInvoice.FN.011 -st-> ReturnTraceability.RQ.011
RouteOptimality.RQ.001 -dr-> ETAAccuracy.RQ.006
InputValidation.RQ.002 -dr-> OrderCompleteness.RQ.003
PaymentSecurity.RQ.004 -dr-> InvoiceCorrectness.RQ.010
ETAAccuracy.RQ.006 -dr-> NotificationLatency.RQ.009
